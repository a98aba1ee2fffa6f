#include "cli.h"

#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "hostport.h"
#include "output_file.h"
#include "unwind_cache.h"

#define PT_VERSION "0.1.0"

enum {
    OPT_COLLAPSED = 256, OPT_COLLAPSED_VALUE, OPT_WAKER, OPT_KINDS, OPT_BY, OPT_TOP,
    OPT_THRESHOLD, OPT_PRINT_THRESHOLD, OPT_PHASE_THRESHOLD, OPT_ROLE, OPT_VERSION,
    OPT_MAX_BLOCKERS, OPT_SELF_STATS, OPT_PROBES, OPT_SORT, OPT_UNWIND, OPT_UNWIND_CACHE,
    OPT_SHOW_IDLE, OPT_PPROF, OPT_LISTEN, OPT_LISTEN_TOKEN, OPT_STACKS, OPT_STACK_BUDGET, OPT_RECYCLED_BUDGET,
    OPT_CGROUP, OPT_CHAINS,
};

static const struct option long_opts[] = {
    {"pid", required_argument, 0, 'p'},
    {"cgroup", required_argument, 0, OPT_CGROUP},
    {"interval", required_argument, 0, 'i'},
    {"duration", required_argument, 0, 'd'},
    {"format", required_argument, 0, 'f'},
    {"output", required_argument, 0, 'o'},
    {"collapsed", required_argument, 0, OPT_COLLAPSED},
    {"collapsed-value", required_argument, 0, OPT_COLLAPSED_VALUE},
    {"waker", no_argument, 0, OPT_WAKER},
    {"pprof", required_argument, 0, OPT_PPROF},
    {"listen", required_argument, 0, OPT_LISTEN},
    {"listen-token", required_argument, 0, OPT_LISTEN_TOKEN},
    {"show-idle", no_argument, 0, OPT_SHOW_IDLE},
    {"kinds", required_argument, 0, OPT_KINDS},
    {"by", required_argument, 0, OPT_BY},
    {"top", required_argument, 0, OPT_TOP},
    {"chains", required_argument, 0, OPT_CHAINS},
    {"threshold", required_argument, 0, OPT_THRESHOLD},
    {"print-threshold", required_argument, 0, OPT_PRINT_THRESHOLD},
    {"phase-threshold", required_argument, 0, OPT_PHASE_THRESHOLD},
    {"role", required_argument, 0, OPT_ROLE},
    {"max-blockers", required_argument, 0, OPT_MAX_BLOCKERS},
    {"self-stats", no_argument, 0, OPT_SELF_STATS},
    {"probes", required_argument, 0, OPT_PROBES},
    {"sort", required_argument, 0, OPT_SORT},
    {"unwind", required_argument, 0, OPT_UNWIND},
    {"unwind-cache", required_argument, 0, OPT_UNWIND_CACHE},
    {"stacks", required_argument, 0, OPT_STACKS},
    {"stack-budget", required_argument, 0, OPT_STACK_BUDGET},
    {"recycled-budget", required_argument, 0, OPT_RECYCLED_BUDGET},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, OPT_VERSION},
    {0, 0, 0, 0},
};

static void options_usage(FILE *f)
{
    fputs("usage: parktrace [OPTIONS] [-- COMMAND [ARG...]]\n"
          "  -p, --pid PID[,PID...]     trace only these processes (default: whole system)\n"
          "      --cgroup PATH[,PATH...]\n"
          "                             trace only the processes in these cgroup v2 paths and below\n"
          "                             (/system.slice/postgresql.service), filtered in the kernel\n"
          "  -i, --interval DUR         report every DUR (1s, 250ms, 2m); live view on a terminal\n"
          "  -d, --duration DUR         stop after DUR\n"
          "  -f, --format text|json     report format (json: one object per line)\n"
          "  -o, --output FILE          write reports to FILE (- = stdout)\n"
          "      --collapsed FILE       write collapsed stacks for flamegraph.pl at exit (- = stdout)\n"
          "      --collapsed-value time|count   microseconds waited (default) or waits\n"
          "      --waker                append the waker's stack after a -- frame\n"
          "      --pprof FILE           write a gzip-compressed pprof contention profile at exit\n"
          "      --listen ADDR:PORT     serve /metrics (Prometheus) and /debug/pprof/mutex, /block\n"
          "                             on this address only (127.0.0.1:9465, [::1]:9465)\n"
          "      --listen-token FILE    every request to --listen needs Authorization: Bearer and\n"
          "                             the token in FILE (mode 0600); without it, loopback only\n"
          "                             and no /debug/pprof (stacks are private)\n"
          "      --kinds LIST           futex,jvm-park,jvm-monitor,jvm-wait,go-park (default: all)\n"
          "      --by object|class|site|cgroup\n"
          "                             group rows (default: object)\n"
          "      --top N                rows per report (default 20, 0 = all)\n"
          "      --chains N             wait chains per report (default 10, 0 = none read)\n"
          "      --show-idle            rank idle housekeeping (service threads, pool workers\n"
          "                             waiting for work) in place, not after the contention\n"
          "      --threshold N          time a blocker only after its Nth park\n"
          "      --print-threshold N    omit blockers with fewer than N parks\n"
          "      --phase-threshold F    CSP at which a phase begins (default 0.05)\n"
          "      --sort time|csp        order rows by thread time (the default) or by CSP\n"
          "      --role CLASS=lock|wait override a class's role\n"
          "      --max-blockers N       size of the kernel blocker table (default 65536)\n"
          "      --recycled-budget KIB  memory for recycled blockers' sites and stacks; past it, exited\n"
          "                             processes' are folded per command (default 4096)\n"
          "      --self-stats           at exit, print parktrace's own CPU, memory and BPF run time\n"
          "      --probes sched|syscalls|uprobes\n"
          "                             time waits from the scheduler (default), at the futex calls, or\n"
          "                             (Java parks) with uprobes on Unsafe_Park/Unsafe_Unpark\n"
          "      --unwind cfi|copy      user stacks unwound in the kernel from the binaries' DWARF CFI\n"
          "                             (default), or one stack copy per call site unwound by parktrace\n"
          "      --unwind-cache DIR|none\n"
          "                             keep unwind tables between runs in DIR (default " PT_UNWIND_CACHE_DIR ")\n"
          "      --stacks sampled|all   stacks within a budget, those over it taken at random and\n"
          "                             weighted (default); or every stack, whatever it costs\n"
          "      --stack-budget PCT     sampled: stacks take at most PCT% of each CPU (default 0.5)\n"
          "  -h, --help, --version\n",
          f);
}

static int fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "parktrace: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return -1;
}

/* The index of ARG among NAMES, or -1. */
static int choice(const char *arg, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(arg, names[i]) == 0)
            return i;
    return -1;
}


static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *v = x;
    return 0;
}

/* "PID[,PID...]": every item a PID, so "1,,2" or "1," is refused. */
static int parse_pids(const char *arg, struct pt_options *o)
{
    char *copy = strdup(arg), *rest = copy;
    int rc = 0;
    while (rest && !rc) {
        char *tok = strsep(&rest, ",");
        uint64_t v;
        if (!*tok)
            rc = fail("invalid PID list '%s' (PID[,PID...])", arg);
        else if (parse_u64(tok, &v) || v == 0 || v > INT_MAX)
            rc = fail("invalid PID '%s'", tok);
        else if (o->npids == PT_MAX_PIDS)
            rc = fail("too many PIDs (at most 64): %s", arg);
        else
            o->pids[o->npids++] = (int)v;
    }
    free(copy);
    return rc;
}

/* "PATH[,PATH...]": cgroup v2 paths as /proc/PID/cgroup writes them,
 * absolute, with no "." or ".." step (a path must stay under the
 * hierarchy's root). */
static bool cgroup_path_ok(const char *path)
{
    if (path[0] != '/')
        return false;
    for (const char *s = path + 1; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return false;
        s += n + (s[n] == '/');
    }
    return true;
}

static int parse_cgroups(const char *arg, struct pt_options *o)
{
    char *copy = strdup(arg), *rest = copy;
    int rc = copy ? 0 : fail("out of memory reading --cgroup %s", arg);
    while (rest && !rc) {
        char *tok = strsep(&rest, ",");
        if (!cgroup_path_ok(tok))
            rc = fail("invalid --cgroup path '%s' (an absolute cgroup v2 path such as /system.slice/x.service, "
                      "no . or .. steps)", tok);
        else if (strlen(tok) >= PT_CGROUP_ARG_MAX)
            rc = fail("--cgroup path too long (at most 1023 bytes): %.60s...", tok);
        else if (o->ncgroups == PT_MAX_CGROUPS)
            rc = fail("too many cgroups (at most 8): %s", arg);
        else
            snprintf(o->cgroups[o->ncgroups++], PT_CGROUP_ARG_MAX, "%s", tok);
    }
    free(copy);
    return rc;
}

/* A file to write: "-" is standard output; any other value that starts
 * with '-' is an option taken as the file by mistake ("-o -- cmd"). */
static int parse_output(const char *name, const char *arg, const char **path)
{
    if (!*arg || (arg[0] == '-' && arg[1])) {
        fprintf(stderr, "parktrace: %s wants a file name or -, not '%s' (write ./%s for such a file)\n", name,
                arg, arg);
        return -1;
    }
    *path = arg;
    return 0;
}

/* The option getopt stopped at, as the user wrote it: "-z" from "-zq",
 * "--bogus" from "--bogus=1". */
static void option_named(char **argv, char *buf, size_t len)
{
    const char *arg = argv[optind - 1];
    if (strncmp(arg, "--", 2) == 0)
        snprintf(buf, len, "%.*s", (int)strcspn(arg, "="), arg);
    else
        snprintf(buf, len, "-%c", optopt);
}

/* "KIND[,KIND...]": as with -p, an empty item is refused. */
static int parse_kinds(const char *arg, struct pt_options *o)
{
    char *copy = strdup(arg), *rest = copy;
    int rc = 0;
    o->kinds = 0;
    while (rest && !rc) {
        char *tok = strsep(&rest, ",");
        int k = choice(tok, pt_kind_names, PT_KIND_COUNT);
        if (!*tok)
            rc = fail("invalid --kinds '%s' (KIND[,KIND...])", arg);
        else if (k < 0)
            rc = fail("unknown kind '%s' (futex, jvm-park, jvm-monitor, jvm-wait, go-park)", tok);
        else
            o->kinds |= 1u << k;
    }
    free(copy);
    return rc;
}

static int parse_role(const char *arg, struct pt_options *o)
{
    const char *eq = strrchr(arg, '=');
    if (!eq || eq == arg || (strcmp(eq + 1, "lock") && strcmp(eq + 1, "wait")))
        return fail("--role wants CLASS=lock|wait, not '%s'", arg);
    if (o->nroles == PT_MAX_ROLES)
        return fail("too many --role options (at most 32): %s", arg);
    o->roles[o->nroles].cls = strndup(arg, (size_t)(eq - arg));
    o->roles[o->nroles].wait = strcmp(eq + 1, "wait") == 0;
    o->nroles++;
    return 0;
}

static int parse_duration_opt(const char *name, const char *arg, uint64_t *ns)
{
    if (duration_parse(arg, ns)) {
        fprintf(stderr, "parktrace: invalid %s '%s' (examples: 1s, 250ms, 2m)\n", name, arg);
        return -1;
    }
    return 0;
}

/* The options that take one of a few words: the word's index is the
 * value (set_choice), and an unknown word is refused with the list. */
static const struct choice_option {
    int opt;
    const char *label;       /* as the error names it */
    const char *words[5];    /* NULL after the last */
} choice_options[] = {
    {'f', "format", {"text", "json"}},
    {OPT_COLLAPSED_VALUE, "--collapsed-value", {"time", "count"}},
    {OPT_BY, "--by", {"object", "class", "site", "cgroup"}},
    {OPT_SORT, "--sort", {"time", "csp"}},
    {OPT_PROBES, "--probes", {"sched", "syscalls", "uprobes"}},
    {OPT_UNWIND, "--unwind", {"cfi", "copy"}},
    {OPT_STACKS, "--stacks", {"sampled", "all"}},
};

static void set_choice(struct pt_options *o, int opt, int k)
{
    switch (opt) {
    case 'f': o->format = (enum pt_format)k; break;
    case OPT_COLLAPSED_VALUE: o->collapsed_count = k == 1; break;
    case OPT_BY: o->by = (enum pt_group)k; break;
    case OPT_SORT: o->sort = (enum pt_sort)k; break;
    case OPT_PROBES: o->probes = (enum pt_probes)k; break;
    case OPT_UNWIND: o->unwind = (enum pt_unwind)k; break;
    case OPT_STACKS: o->stacks_all = k == 1; break;
    }
}

/* Option OPT when it takes one of a few words: 0 once set, -1 after one
 * line for a word it does not know, 1 when OPT is not such an option. */
static int parse_choice(int opt, const char *arg, struct pt_options *o)
{
    for (size_t i = 0; i < sizeof(choice_options) / sizeof(choice_options[0]); i++) {
        const struct choice_option *c = &choice_options[i];
        if (c->opt != opt)
            continue;
        int n = 0;
        while (n < 4 && c->words[n])
            n++;
        int k = choice(arg, c->words, n);
        if (k >= 0) {
            set_choice(o, opt, k);
            return 0;
        }
        char list[128];
        snprintf(list, sizeof(list), n == 2 ? "%s or %s" : "%s, %s or %s", c->words[0], c->words[1],
                 n > 2 ? c->words[2] : "");
        fprintf(stderr, "parktrace: invalid %s '%s' (%s)\n", c->label, arg, list);
        return -1;
    }
    return 1;
}

/* Option OPT when it takes a number: 0 once set, -1 after one line, 1
 * when OPT takes no number. */
static int parse_number(int opt, const char *arg, struct pt_options *o)
{
    uint64_t v;
    char *end;
    switch (opt) {
    case OPT_TOP:
        if (parse_u64(arg, &v) || v > INT_MAX)
            return fail("invalid --top '%s'", arg);
        o->top = (int)v;
        o->top_given = true;
        return 0;
    case OPT_CHAINS:
        if (parse_u64(arg, &v) || v > 1000)
            return fail("invalid --chains '%s' (0 to 1000)", arg);
        o->chains = (int)v;
        return 0;
    case OPT_THRESHOLD:
        return parse_u64(arg, &o->threshold) ? fail("invalid --threshold '%s'", arg) : 0;
    case OPT_PRINT_THRESHOLD:
        return parse_u64(arg, &o->print_threshold) ? fail("invalid --print-threshold '%s'", arg) : 0;
    case OPT_PHASE_THRESHOLD:
        o->phase_threshold = strtod(arg, &end);
        if (*end || end == arg || !(o->phase_threshold > 0 && o->phase_threshold <= 1))
            return fail("invalid --phase-threshold '%s' (a fraction in (0,1])", arg);
        return 0;
    case OPT_MAX_BLOCKERS:
        if (parse_u64(arg, &v) || v < 16 || v > (1u << 22))
            return fail("invalid --max-blockers '%s' (16 .. 4194304)", arg);
        o->max_blockers = (uint32_t)v;
        return 0;
    case OPT_RECYCLED_BUDGET:
        if (parse_u64(arg, &v) || v < 16 || v > (1u << 22))
            return fail("invalid --recycled-budget '%s' (16 .. 4194304 KiB)", arg);
        o->recycled_budget = v << 10;
        return 0;
    case OPT_STACK_BUDGET: {
        double pct = strtod(arg, &end);
        if (end == arg || *end || !(pct > 0 && pct <= 100))
            return fail("invalid --stack-budget '%s' (a percentage of each CPU, above 0 and at most 100)", arg);
        o->stack_budget = pct / 100;
        return 0;
    }
    }
    return 1;
}

/* Any other option OPT: 0 once set, -1 after one line, 1 after printing
 * the help or the version. */
static int parse_other(int opt, char *arg, char **argv, struct pt_options *o)
{
    char name[64];
    switch (opt) {
    case 'p': return parse_pids(arg, o);
    case OPT_CGROUP: return parse_cgroups(arg, o);
    case 'i': return parse_duration_opt("interval", arg, &o->interval_ns);
    case 'd': return parse_duration_opt("duration", arg, &o->duration_ns);
    case 'o': return parse_output("-o", arg, &o->output);
    case OPT_COLLAPSED: return parse_output("--collapsed", arg, &o->collapsed);
    case OPT_PPROF: return parse_output("--pprof", arg, &o->pprof);
    case OPT_KINDS: return parse_kinds(arg, o);
    case OPT_ROLE: return parse_role(arg, o);
    case OPT_LISTEN:
        if (hostport_parse(arg, &o->listen_addr, &o->listen_len))
            return fail("invalid --listen '%s' (ADDR:PORT with a numeric address, for example "
                        "127.0.0.1:9465 or [::1]:9465)", arg);
        o->listen = arg;
        return 0;
    case OPT_LISTEN_TOKEN: o->listen_token = arg; return 0;
    case OPT_WAKER: o->waker = true; return 0;
    case OPT_SHOW_IDLE: o->show_idle = true; return 0;
    case OPT_SELF_STATS: o->self_stats = true; return 0;
    case OPT_UNWIND_CACHE:
        if (!*arg)
            return fail("invalid --unwind-cache '%s' (a directory, or none)", arg);
        o->unwind_cache = strcmp(arg, "none") ? arg : NULL;
        return 0;
    case 'h':
        options_usage(stdout);
        return 1;
    case OPT_VERSION:
        printf("parktrace %s\n", PT_VERSION);
        return 1;
    case ':':
        option_named(argv, name, sizeof(name));
        return fail("option '%s' needs a value (see parktrace --help)", name);
    default:
        option_named(argv, name, sizeof(name));
        /* getopt names a known long option given a value it does not take. */
        if (optopt && name[1] == '-')
            return fail("option '%s' takes no value (see parktrace --help)", name);
        return fail("unknown option '%s' (see parktrace --help)", name);
    }
}

static void set_defaults(struct pt_options *o)
{
    memset(o, 0, sizeof(*o));
    o->kinds = (1u << PT_KIND_COUNT) - 1;
    o->top = 20;
    o->chains = 10;
    o->phase_threshold = 0.05;
    o->max_blockers = 65536;
    o->recycled_budget = PT_RECYCLED_BUDGET;
    o->unwind_cache = PT_UNWIND_CACHE_DIR;
    o->stack_budget = PT_STACK_BUDGET;
}

/* What no single option can say wrong: a command with -p, two outputs
 * on one file, options that need another. 0, or -1 after one line. */
static int check_together(struct pt_options *o)
{
    if (o->command && o->npids)
        return fail("%s", "use either -p or -- COMMAND, not both");
    if (o->output && o->collapsed && output_file_same(o->output, o->collapsed))
        return fail("-o and --collapsed both name %s: give each its own file", o->collapsed);
    /* Each file is written aside and renamed: two options on one file
     * would leave only one of them. */
    const char *files[3] = {o->output, o->collapsed, o->pprof};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (files[i] && files[j] && output_file_same(files[i], files[j]))
                return fail("two outputs both name %s: give each its own file", files[j]);
    if (o->listen_token && !o->listen)
        return fail("%s", "--listen-token is for --listen: give --listen ADDR:PORT too");
    /* Stacks and every process's names: for this machine's users at most,
     * unless a token says who may ask. */
    if (o->listen && !o->listen_token && !hostport_loopback((const struct sockaddr *)&o->listen_addr))
        return fail("--listen %s is not a loopback address: serving other machines needs --listen-token FILE",
                    o->listen);
    if (o->waker && !o->collapsed)
        return fail("%s", "--waker adds wakers to the collapsed stacks: give --collapsed FILE too");
    if (o->waker && o->probes == PT_PROBES_SYSCALLS)
        return fail("%s", "--waker needs --probes sched or uprobes: the futex calls do not show the waker");
    return 0;
}

int options_parse(int argc, char **argv, struct pt_options *o)
{
    set_defaults(o);
    opterr = 0;
    optind = 1;
    /* '+' stops at the first non-option so "-- COMMAND -x" stays intact. */
    int c;
    while ((c = getopt_long(argc, argv, "+:p:i:d:f:o:h", long_opts, NULL)) != -1) {
        int rc = parse_choice(c, optarg, o);
        if (rc == 1)
            rc = parse_number(c, optarg, o);
        if (rc == 1)
            rc = parse_other(c, optarg, argv, o);
        if (rc)
            return rc;
    }
    if (optind < argc) {
        if (strcmp(argv[optind - 1], "--") != 0)
            return fail("unexpected argument '%s' (put a command after --; see parktrace --help)", argv[optind]);
        o->command = &argv[optind];
    }
    return check_together(o);
}
