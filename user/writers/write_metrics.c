/* /metrics: the model in Prometheus text exposition 0.0.4 (docs/contract/cli.md,
 * "Fleet endpoints"). One series per (comm, container, kind, class, role),
 * never per object or PID: at most METRICS_CLASSES series per process name
 * (a comm in a container, container="" outside any) and METRICS_COMMS
 * process names, the rest summed under class="other" and comm="other" (and
 * container="other" for a container's), by wait time, so a fleet's series
 * count stays bounded.
 * A user other than root has at most METRICS_COMMS_PER_OWNER of those
 * names: one user's 64 commands of long waits cannot push every other
 * process into "other" (issue 39).
 *
 * Counters come from the model's stacks (waits that ended, cumulative
 * since start, recycled blockers included); gauges from its rows (threads
 * waiting now, and the window's CSP). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "self_counters.h"
#include "writer.h"

#define METRICS_CLASSES 8
#define METRICS_COMMS 64
#define METRICS_COMMS_PER_OWNER 16
#define OTHER "other"

struct series {
    const char *comm, *container, *kind, *cls;   /* container "" outside any */
    bool wait;
    uint64_t count, ns, parked;
    bool has_csp;
    double csp;
    uint64_t comm_ns;   /* the comm's total, to rank comms */
    uint32_t uid;       /* the owner of the heaviest process in it (PT_UID_UNKNOWN: none known) */
};

/* The process name a series is bounded by: its comm in its container. */
static int cmp_name(const struct series *a, const struct series *b)
{
    int c = strcmp(a->comm, b->comm);
    return c ? c : strcmp(a->container, b->container);
}

static int cmp_key(const void *pa, const void *pb)
{
    const struct series *a = pa, *b = pb;
    int c = cmp_name(a, b);
    if (!c)
        c = strcmp(a->kind, b->kind);
    if (!c)
        c = strcmp(a->cls, b->cls);
    return c ? c : (int)a->wait - (int)b->wait;
}

/* Heaviest comm first, then within a comm its heaviest series first. */
static int cmp_weight(const void *pa, const void *pb)
{
    const struct series *a = pa, *b = pb;
    if (a->comm_ns != b->comm_ns)
        return a->comm_ns > b->comm_ns ? -1 : 1;
    int c = cmp_name(a, b);
    if (c)
        return c;
    return a->ns != b->ns ? (a->ns > b->ns ? -1 : 1) : cmp_key(a, b);
}

/* Sorts V by key and sums equal keys; returns the new length. */
static int merge(struct series *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_key);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (k && cmp_key(&v[k - 1], &v[i]) == 0) {
            struct series *s = &v[k - 1];
            if (v[i].uid != PT_UID_UNKNOWN && (v[i].ns > s->ns || s->uid == PT_UID_UNKNOWN))
                s->uid = v[i].uid;
            s->count += v[i].count;
            s->ns += v[i].ns;
            s->parked += v[i].parked;
            /* CSPs of different processes do not add: the worst one shows. */
            if (v[i].has_csp && (!s->has_csp || v[i].csp > s->csp))
                s->csp = v[i].csp;
            s->has_csp |= v[i].has_csp;
        } else {
            v[k++] = v[i];
        }
    }
    return k;
}

/* Whether one more comm of owner UID may be shown, counting it if so:
 * root's always may; another owner's up to METRICS_COMMS_PER_OWNER. */
static bool owner_has_room(uint32_t uid, uint32_t *owners, int *counts, int *nowners)
{
    if (uid == 0)
        return true;
    int i = 0;
    while (i < *nowners && owners[i] != uid)
        i++;
    if (i == *nowners) {
        owners[i] = uid;
        counts[i] = 0;
        ++*nowners;
    }
    return counts[i]++ < METRICS_COMMS_PER_OWNER;
}

/* Folds what is past the comm, owner and class limits into "other". */
static int bound(struct series *v, int n)
{
    for (int i = 0, j; i < n; i = j) {
        uint64_t total = 0;
        uint32_t uid = PT_UID_UNKNOWN;
        uint64_t heaviest = 0;
        for (j = i; j < n && cmp_name(&v[j], &v[i]) == 0; j++) {
            total += v[j].ns;
            if (v[j].uid != PT_UID_UNKNOWN && (uid == PT_UID_UNKNOWN || v[j].ns > heaviest)) {
                uid = v[j].uid;
                heaviest = v[j].ns;
            }
        }
        for (int k = i; k < j; k++) {
            v[k].comm_ns = total;
            v[k].uid = uid;
        }
    }
    qsort(v, (size_t)n, sizeof(*v), cmp_weight);
    /* Owners among the shown comms: at most METRICS_COMMS of them. */
    uint32_t owners[METRICS_COMMS + 1];
    int counts[METRICS_COMMS + 1], nowners = 0;
    int comms = 0, classes = 0;
    bool shown = false;
    for (int i = 0; i < n; i++) {
        bool new_comm = !i || cmp_name(&v[i], &v[i - 1]) != 0;
        if (new_comm) {
            shown = comms < METRICS_COMMS && owner_has_room(v[i].uid, owners, counts, &nowners);
            comms += shown;
            classes = 0;
        }
        classes++;
        if (!shown) {
            v[i].comm = OTHER;
            v[i].container = v[i].container[0] ? OTHER : "";
        }
        if (classes > METRICS_CLASSES || !shown)
            v[i].cls = OTHER;
    }
    return merge(v, n);
}

/* A label value: printable UTF-8, with '"' and '\' escaped; anything else
 * is '?'. */
static void put_label(FILE *f, const char *s)
{
    while (*s) {
        uint32_t cp;
        int n = sanitize_utf8_next(s, &cp);
        if (!n || !sanitize_printable(cp)) {
            fputc('?', f);
            s += n ? n : 1;
            continue;
        }
        if (cp == '"' || cp == '\\')
            fputc('\\', f);
        fwrite(s, 1, (size_t)n, f);
        s += n;
    }
}

static void put_series(FILE *f, const char *name, const struct series *s)
{
    fprintf(f, "%s{comm=\"", name);
    put_label(f, s->comm);
    fputs("\",container=\"", f);
    put_label(f, s->container);
    fputs("\",kind=\"", f);
    put_label(f, s->kind);
    fputs("\",class=\"", f);
    put_label(f, s->cls);
    fprintf(f, "\",role=\"%s\"} ", s->wait ? "wait" : "lock");
}

static void put_head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A figure's unit as Prometheus names them (base units: bytes, seconds, ratios):
 * the name's unit word replaced, and the factor to the base unit. */
static const struct {
    const char *unit, *word, *base;
    double factor;
} base_units[] = {
    {"KiB", "kb", "bytes", 1024.0},
    {"ms", "ms", "seconds", 1e-3},
    {"ns", "ns", "seconds", 1e-9},
    {"s", "s", "seconds", 1.0},
    {"%", "pct", "ratio", 0.01},
};

/* parktrace_self_NAME with its unit word in base units ("rss_kb" gives
 * parktrace_self_rss_bytes), and the factor its value takes. */
static double self_metric_name(const struct self_counter *c, char *out, size_t len)
{
    int u = -1;
    for (size_t i = 0; i < sizeof(base_units) / sizeof(base_units[0]); i++)
        if (strcmp(c->unit, base_units[i].unit) == 0)
            u = (int)i;
    size_t n = (size_t)snprintf(out, len, "parktrace_self");
    const char *w = c->name;
    while (*w && n < len) {
        size_t k = strcspn(w, "_");
        bool unit_word = u >= 0 && k == strlen(base_units[u].word) && strncmp(w, base_units[u].word, k) == 0;
        n += (size_t)snprintf(out + n, len - n, "_%.*s", unit_word ? (int)strlen(base_units[u].base) : (int)k,
                              unit_word ? base_units[u].base : w);
        w += k + (w[k] == '_');
    }
    return u >= 0 ? base_units[u].factor : 1.0;
}

/* The --self-stats figures, one gauge each, named and explained by the
 * registry. The kernel counts BPF runs only while its statistics are on
 * (--self-stats): without them bpf_runs and its mean are left out. */
static void put_self(FILE *f, const struct self_values *v)
{
    for (int i = 0; i < SELF_COUNT; i++) {
        const struct self_counter *c = &self_counters[i];
        if (c->format == SELF_PROGRAMS ||
            ((i == SC_BPF_RUNS || i == SC_BPF_NS_PER_RUN) && !v->v[SC_BPF_RUNS].u))
            continue;
        char name[128], help[320];
        double factor = self_metric_name(c, name, sizeof(name));
        snprintf(help, sizeof(help), "%s.", c->help);
        put_head(f, name, "gauge", help);
        double value = c->format == SELF_INT                                  ? (double)v->v[i].i
                       : c->format == SELF_FIXED1 || c->format == SELF_FIXED3 ? v->v[i].d
                                                                              : (double)v->v[i].u;
        fprintf(f, "%s %.9g\n", name, value * factor);
    }
}

int write_metrics(FILE *f, const struct pt_model *m, const struct pt_write_opts *o)
{
    int n = 0;
    struct series *v = calloc((size_t)(m->nstacks + m->nrows) + 1, sizeof(*v));
    if (!v)
        return -1;
    for (int i = 0; i < m->nstacks; i++) {
        const struct pt_model_stack *s = &m->stacks[i];
        if (s->count)
            v[n++] = (struct series){.comm = s->root, .container = s->container ? s->container : "", .kind = s->kind ? s->kind : "futex", .cls = s->leaf,
                                     .wait = s->wait, .count = s->count, .ns = s->ns, .uid = s->uid};
    }
    for (int i = 0; i < m->nrows; i++) {
        const struct pt_row *r = &m->rows[i];
        v[n++] = (struct series){.comm = r->comm, .container = r->container ? r->container : "", .kind = r->kind, .cls = r->cls, .wait = r->wait,
                                 .parked = r->fig.parked_now, .has_csp = r->has_csp, .csp = r->csp,
                                 .uid = PT_UID_UNKNOWN};
    }
    n = bound(v, merge(v, n));

    put_head(f, "parktrace_waits_total", "counter", "Waits that ended since parktrace started.");
    for (int i = 0; i < n; i++) {
        put_series(f, "parktrace_waits_total", &v[i]);
        fprintf(f, "%" PRIu64 "\n", v[i].count);
    }
    put_head(f, "parktrace_wait_seconds_total", "counter", "Time waited by the waits that ended, in seconds.");
    for (int i = 0; i < n; i++) {
        put_series(f, "parktrace_wait_seconds_total", &v[i]);
        fprintf(f, "%.9f\n", (double)v[i].ns / 1e9);
    }
    put_head(f, "parktrace_parked_threads", "gauge", "Threads waiting at the end of the last interval.");
    for (int i = 0; i < n; i++) {
        put_series(f, "parktrace_parked_threads", &v[i]);
        fprintf(f, "%" PRIu64 "\n", v[i].parked);
    }
    put_head(f, "parktrace_critical_section_pressure", "gauge",
             "Share of the working thread time lost waiting for these locks in the last interval "
             "(the highest of its processes; 0 without waits).");
    /* Every lock series, so that a lock gone quiet reads 0, not stale. */
    for (int i = 0; i < n; i++) {
        if (v[i].wait)
            continue;
        put_series(f, "parktrace_critical_section_pressure", &v[i]);
        fprintf(f, "%.6f\n", v[i].has_csp ? v[i].csp : 0.0);
    }
    free(v);
    put_head(f, "parktrace_dropped_events_total", "counter", "Waits that could not be recorded.");
    fprintf(f, "parktrace_dropped_events_total %" PRIu64 "\n", m->totals.dropped_events);
    put_head(f, "parktrace_dropped_stacks_total", "counter", "Waiter stacks that could not be recorded.");
    fprintf(f, "parktrace_dropped_stacks_total %" PRIu64 "\n", m->totals.dropped_stacks);
    put_head(f, "process_cpu_seconds_total", "counter", "parktrace's own user and system CPU time, in seconds.");
    fprintf(f, "process_cpu_seconds_total %.6f\n", o->self_cpu_s);
    put_head(f, "process_resident_memory_bytes", "gauge", "parktrace's own resident memory, in bytes.");
    fprintf(f, "process_resident_memory_bytes %" PRIu64 "\n", o->self_rss);
    if (o->self)
        put_self(f, o->self);
    return writer_flush(f);
}
