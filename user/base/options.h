/* The options of docs/contract/cli.md as data, read by every layer; the
 * command line that fills them is cli.h. */
#ifndef PT_OPTIONS_H
#define PT_OPTIONS_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "../bpf/parktrace.h"

#define PT_MAX_PIDS 64
#define PT_CGROUP_ARG_MAX 1024   /* a --cgroup path's bytes, its NUL included */

extern const char *const pt_kind_names[PT_KIND_COUNT];
#define PT_MAX_ROLES 32

enum pt_format { PT_FORMAT_TEXT, PT_FORMAT_JSON };
enum pt_group { PT_BY_OBJECT, PT_BY_CLASS, PT_BY_SITE, PT_BY_CGROUP };
enum pt_probes { PT_PROBES_SCHED, PT_PROBES_SYSCALLS, PT_PROBES_UPROBES };
/* In rank.h's order (enum pt_rank_key); parks and peak from the live view's keys. */
enum pt_sort { PT_SORT_TIME, PT_SORT_CSP, PT_SORT_PARKS, PT_SORT_PEAK };
enum pt_unwind { PT_UNWIND_CFI, PT_UNWIND_COPY };

struct pt_role_override {
    char *cls;
    bool wait;
};

struct pt_options {
    int pids[PT_MAX_PIDS];
    int npids;
    /* --cgroup: cgroup v2 paths ("/system.slice/x.service"), each with its
     * descendants, filtered in the kernel. */
    char cgroups[PT_MAX_CGROUPS][PT_CGROUP_ARG_MAX];
    int ncgroups;
    char **command;           /* argv after "--", or NULL */
    uint64_t interval_ns;     /* 0: no interval reports */
    uint64_t duration_ns;     /* 0: until stopped */
    enum pt_format format;
    const char *output;       /* NULL or "-": standard output */
    const char *collapsed;    /* "-": standard output */
    const char *pprof;        /* --pprof FILE: "-": standard output */
    const char *listen;       /* --listen ADDR:PORT as given, or NULL */
    struct sockaddr_storage listen_addr;
    socklen_t listen_len;
    const char *listen_token; /* --listen-token FILE, or NULL */
    bool collapsed_count;
    bool waker;
    bool show_idle;           /* idle housekeeping rows ranked in place */
    unsigned kinds;           /* bit per enum pt_kind */
    enum pt_group by;
    int top;
    bool top_given;           /* --top was given: the live view fits the rows to its height otherwise */
    int chains;               /* --chains N: the top N wait chains a report lists (0: none read) */
    uint64_t threshold;
    uint64_t print_threshold;
    double phase_threshold;
    struct pt_role_override roles[PT_MAX_ROLES];
    int nroles;
    uint32_t max_blockers;
    uint64_t recycled_budget; /* bytes recycled blockers' sites and stacks may take (retired.h) */
    bool self_stats;
    enum pt_probes probes;
    enum pt_sort sort;
    enum pt_unwind unwind;    /* user stacks: CFI rows walked in the kernel, or copies unwound here */
    const char *unwind_cache; /* directory of unwind tables kept between runs, NULL for none */
    bool stacks_all;          /* --stacks all: every stack walked, whatever it costs */
    double stack_budget;      /* --stacks sampled: share of each CPU the stack walks may take */
};

#define PT_STACK_BUDGET 0.005             /* 0.5% of each CPU */
#define PT_RECYCLED_BUDGET (4ull << 20)   /* 4 MiB */

/* Whether any Java kind (jvm-park, jvm-monitor, jvm-wait) is traced. */
bool options_trace_java(const struct pt_options *o);
/* Goroutine parks (kind go-park) are traced. */
bool options_trace_go(const struct pt_options *o);
/* Processes are looked at for a runtime: a JVM or a Go program. */
bool options_trace_runtimes(const struct pt_options *o);

#endif
