#include "selfstats.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/resource.h>

#include "bpf_stats.h"
#include "deadline_open.h"
#include "elfsyms.h"
#include "jvm_tracker.h"
#include "loader.h"
#include "monotonic.h"
#include "procmaps.h"
#include "self_counters.h"
#include "services.h"
#include "stacks.h"
#include "unwind_tables.h"

int selfstats_enable(void)
{
    return bpf_stats_enable();
}

/* Peak resident memory of parktrace itself: /proc/self/status's VmHWM, not
 * ru_maxrss, which keeps the launching process's peak across exec. */
static long peak_rss_kb(void)
{
    FILE *st = fopen("/proc/self/status", "re");
    char line[128];
    long kb = -1;
    while (st && fgets(line, sizeof(line), st))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (st)
        fclose(st);
    return kb;
}

/* Each program's runs and run time, read once: printed where the registry
 * puts them (after the peak RSS), and summed into its figures. Two reads
 * disagreed, the programs running on in between (bpf_runs 7 below the
 * printed programs' sum in a CI run). */
#define MAX_PROGRAMS 64
struct programs {
    int n;
    struct {
        const char *name;
        uint64_t runs, ns;
    } p[MAX_PROGRAMS];
};

static void take_program(void *ctx, const char *name, uint64_t runs, uint64_t ns)
{
    struct programs *ps = ctx;
    if (ps->n < MAX_PROGRAMS) {
        ps->p[ps->n].name = name;
        ps->p[ps->n].runs = runs;
        ps->p[ps->n].ns = ns;
        ps->n++;
    }
}

static void print_programs(FILE *f, void *ctx)
{
    const struct programs *ps = ctx;
    for (int i = 0; i < ps->n; i++)
        fprintf(f, " %s=%" PRIu64 "x%" PRIu64 "ns", ps->p[i].name, ps->p[i].runs,
                ps->p[i].runs ? ps->p[i].ns / ps->p[i].runs : 0);
}

/* The upper bound of the bucket holding the 99th percentile of H's runs
 * (parktrace.h: four buckets per power of two), 0 when none ran. */
static uint64_t run_p99_ns(const __u64 *h)
{
    uint64_t all = 0, seen = 0;
    for (int i = 0; i < PT_RUN_BUCKETS; i++)
        all += h[i];
    for (int i = 0; i < PT_RUN_BUCKETS && all; i++) {
        seen += h[i];
        if (seen * 100 >= all * 99) {
            int b = i / 4, sub = i % 4;
            return b < 2 ? (uint64_t)1 << (b + 1) : (uint64_t)(5 + sub) << (b - 2);
        }
    }
    return 0;
}

/* Past the start's discovery, JVM attaches and unwind tables. */
void self_steady_tick(struct self_steady *s, uint64_t start_ns, uint64_t now)
{
    if (!s->from_ns && now >= start_ns + SELF_STEADY_AFTER_NS) {
        s->from_ns = now;
        s->from_cpu_ns = process_cpu_ns();
    }
}

void self_steady_end(struct self_steady *s, uint64_t now)
{
    if (s->from_ns && !s->to_ns) {
        s->to_ns = now;
        s->to_cpu_ns = process_cpu_ns();
    }
}

struct self_span self_span_at(uint64_t started_ns, uint64_t traced_ns, const struct self_steady *s, uint64_t now)
{
    struct self_span span = {.life_s = (double)(now - started_ns) / 1e9, .traced_s = (double)(now - traced_ns) / 1e9};
    if (s->from_ns) {
        uint64_t to = s->to_ns ? s->to_ns : now, to_cpu = s->to_ns ? s->to_cpu_ns : process_cpu_ns();
        span.steady_s = (double)(to - s->from_ns) / 1e9;
        span.steady_cpu_s = (double)(to_cpu - s->from_cpu_ns) / 1e9;
    }
    return span;
}

static double seconds(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* The run line's figures: CPU, memory, the BPF programs' runs, the kernel
 * walks. */
static void read_run(struct self_values *v, const struct programs *ps, const struct pt_hot_counts *h,
                     const struct unwind_tables_usage *u, struct self_span span)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = seconds(ru.ru_utime) + seconds(ru.ru_stime);
    v->v[SC_CPU_S].d = cpu;
    v->v[SC_CPU_PCT].d = span.life_s > 0 ? 100 * cpu / span.life_s : 0;
    /* Under a second of it says little: 0, as for a run too short to have one. */
    v->v[SC_CPU_STEADY_PCT].d = span.steady_s >= 1 ? 100 * span.steady_cpu_s / span.steady_s : 0;
    long rss = peak_rss_kb();
    v->v[SC_RSS_KB].u = rss > 0 ? (uint64_t)rss : 0;
    uint64_t runs = 0, ns = 0;
    for (int i = 0; i < ps->n; i++) {
        runs += ps->p[i].runs;
        ns += ps->p[i].ns;
    }
    v->v[SC_BPF_RUNS].u = runs;
    v->v[SC_BPF_NS_PER_RUN].u = runs ? ns / runs : 0;
    /* The hot programs' tails, from their own clock (two reads in one run
     * of PT_RUN_EVERY on each CPU; the means above pay a sixteenth of it). */
    v->v[SC_SWITCH_P99].u = run_p99_ns(h->run_hist[PT_TIMED_SWITCH]);
    v->v[SC_WAKING_P99].u = run_p99_ns(h->run_hist[PT_TIMED_WAKING]);
    v->v[SC_END_STACKS].u = h->end_stacks;
    v->v[SC_END_STACKS_LOST].u = h->end_stacks_lost;
    v->v[SC_NAMING_REFUSED].u = h->naming_refused;
    v->v[SC_GO_REPARKS].u = h->go_reparks;
    v->v[SC_GO_PARK_REENTRIES].u = h->go_park_reentries;
    v->v[SC_UNWIND_BINARIES].u = u->binaries;
    v->v[SC_UNWIND_NO_CFI].u = u->without_cfi;
    v->v[SC_UNWIND_ROWS].u = u->rows;
    v->v[SC_UNWIND_TABLE_KB].u = u->bytes / 1024;
    v->v[SC_UNWIND_BUILD_S].d = u->build_seconds;
    v->v[SC_UNWIND_CACHED].u = u->cached;
    v->v[SC_UNWIND_CACHE_STORED].u = u->cache_stored;
    uint64_t walks = h->unwind_walks;
    v->v[SC_UNWIND_WALKS].u = walks;
    v->v[SC_UNWIND_NS_PER_WALK].u = walks ? (uint64_t)h->unwind_walk_ns / walks : 0;
    v->v[SC_UNWIND_FRAMES_PER_WALK].u = walks ? (uint64_t)h->unwind_frames / walks : 0;
}

/* The memory line's: what each bounded table holds and refused. */
static void read_memory(struct self_values *v, struct tracer *t, const struct pt_services *sv,
                        const struct stacks *stacks, const struct unwind_tables_usage *u)
{
    v->v[SC_UNWIND_OVER_BUDGET].u = u->over_budget;
    v->v[SC_UNWIND_OWNER_REFUSED].u = u->owner_refused;
    v->v[SC_UNWIND_EVICTED].u = u->evicted;
    v->v[SC_UNWIND_KNOWN].u = u->known;
    v->v[SC_UNWIND_FORGOTTEN].u = u->forgotten;
    v->v[SC_UNWIND_FILES_SKIPPED].u = u->files_skipped;
    struct elfsyms_usage su;
    elfsyms_usage(sv->syms, &su);
    v->v[SC_SYMBOL_KB].u = su.bytes / 1024;
    v->v[SC_SYMBOLS_EVICTED].u = su.evicted;
    v->v[SC_SYMBOL_FILES].u = su.files;
    v->v[SC_SYMBOL_FILES_REFUSED].u = su.refused;
    v->v[SC_BPF_MAPS_KB].u = bpf_stats_maps_kb(t);
    size_t entries, templates, bytes, procs, procs_bytes;
    stacks_usage(stacks, &entries, &templates, &bytes);
    procmaps_usage(sv->maps, &procs, &procs_bytes);
    v->v[SC_STACK_ENTRIES].u = entries;
    v->v[SC_STACK_TEMPLATES].u = templates;
    v->v[SC_STACK_TEMPLATES_TRIMMED].u = stacks_templates_trimmed(stacks);
    v->v[SC_STACK_TEMPLATES_COMPACT].u = (uint64_t)stacks_templates_compact(stacks);
    v->v[SC_STACK_KB].u = bytes / 1024;
    v->v[SC_PROCMAPS].u = procs;
    v->v[SC_PROCMAPS_KB].u = procs_bytes / 1024;
    /* Lookups through a user's mounts killed at their deadline (safe_open.c). */
    v->v[SC_MOUNT_OPENS_KILLED].u = deadline_opens_killed();
    v->v[SC_MOUNT_OPENS_STUCK].u = deadline_opens_stuck();
}

/* The drops line's: what dropped_events and dropped_stacks are made of,
 * and the waits whose lost end was recovered rather than dropped. */
_Static_assert(SC_DROP_CHAINS - SC_DROP_BLOCKERS == PT_DROP_CHAINS - PT_DROP_BLOCKERS &&
                   SC_DROP_STACKS - SC_DROP_BLOCKERS == PT_DROP_STACKS,
               "the registry's drops are in PT_DROP's order");

static void read_drops(struct self_values *v, struct tracer *t, const struct stacks *stacks,
                       const struct pt_hot_counts *h, const struct bpf_counters *bc)
{
    for (int i = 0; i < PT_DROP_COUNT; i++)
        v->v[SC_DROP_BLOCKERS + i].u = tracer_drop(t, i);
    v->v[SC_LOST_ENDS_RECOVERED].u = bc->lost_ends_recovered;
    v->v[SC_STACK_BUDGET_SKIPS].u = h->stack_budget_skips;
    v->v[SC_STACKS_LOST].u = stacks_lost(stacks);
    v->v[SC_DROP_STACKS_TABLE].u = bc->drop_stacks_table;
    v->v[SC_DROP_STACKS_TABLE_ERR].i = bc->drop_stacks_table_err;
    v->v[SC_DROP_STACKS_FP].u = bc->drop_stacks_fp;
    v->v[SC_DROP_STACKS_FP_ERR].i = bc->drop_stacks_fp_err;
}

static void read_jvms(struct self_values *v, const struct jvm_tracker *jvm, const struct bpf_counters *bc)
{
    struct jvm_tracker_stats js;
    jvm_tracker_stats(jvm, &js);
    v->v[SC_JVMS].u = (uint64_t)js.tracked;
    v->v[SC_JVM_ENTRIES].u = (uint64_t)js.entries;
    v->v[SC_JVMS_EVICTED].u = js.evicted;
    v->v[SC_JVMS_GIVEN_UP].u = js.given_up;
    v->v[SC_JVM_LISTS_UNREAD].u = js.lists_unread;
    v->v[SC_JAVA_THREADS_REFUSED].u = js.threads_refused;
    v->v[SC_JVM_CANDIDATES_EVICTED].u = js.candidates_evicted;
    v->v[SC_JVM_PROBES_REFUSED].u = js.probes_refused;
    v->v[SC_JVMS_HEAP_READS_KEPT].u = js.heap_reads_kept;
    v->v[SC_SAFEPOINT_EDGES].u = bc->safepoint_edges;
    v->v[SC_CODE_RANGES_LATE].u = js.code_ranges_late;
    v->v[SC_GO_PROCESSES].u = js.go_processes;
    v->v[SC_GO_UNSUPPORTED].u = js.go_unsupported;
    v->v[SC_GO_REFUSED].u = js.go_refused;
}

/* Every figure but the collector's and the per-program ones; the unwind
 * usage and the hot counters too, for the caller that prints its tables
 * and the programs' parts. */
static void read_all(struct self_values *v, struct programs *ps, struct unwind_tables_usage *u,
                     struct pt_hot_counts *h, struct tracer *t, const struct pt_services *sv,
                     const struct stacks *stacks, const struct jvm_tracker *jvm, struct self_span span)
{
    bpf_stats_programs(t, take_program, ps);
    tracer_hot_counts(t, h);
    unwind_tables_usage(sv->tables, u);
    struct bpf_counters bc;
    bpf_stats_counters(t, &bc);
    read_run(v, ps, h, u, span);
    double per_pct = span.traced_s > 0 ? 100.0 / 1e9 / span.traced_s : 0;
    v->v[SC_STACK_SPENT_PCT].d = per_pct * (double)tracer_budget_spent_max(t, false);
    v->v[SC_CHAIN_SPENT_PCT].d = per_pct * (double)tracer_budget_spent_max(t, true);
    v->v[SC_CHAINS_UNREAD].u = tracer_chains_unread(t);
    read_memory(v, t, sv, stacks, u);
    read_drops(v, t, stacks, h, &bc);
    read_jvms(v, jvm, &bc);
}

void selfstats_read(struct self_values *v, struct tracer *t, const struct pt_services *sv,
                    const struct stacks *stacks, const struct jvm_tracker *jvm, struct self_span span)
{
    struct unwind_tables_usage u;
    struct pt_hot_counts h;
    struct programs ps = {0};
    read_all(v, &ps, &u, &h, t, sv, stacks, jvm, span);
}

/* PARKTRACE_TIME_PARTS: each part's runs and mean, on a line of its own
 * (none when the parts were not timed). */
static void print_parts(FILE *f, const struct pt_hot_counts *h)
{
    static const char *const names[PT_PART_COUNT] = {
        [PT_PART_OUT_STALE] = "out_stale", [PT_PART_OUT_IDLE] = "out_idle", [PT_PART_KEY] = "key",
        [PT_PART_SLOT] = "slot",           [PT_PART_START] = "start",       [PT_PART_STACK] = "stack",
        [PT_PART_IN_IDLE] = "in_idle",     [PT_PART_IN_END] = "in_end",     [PT_PART_WAKE] = "wake",
        [PT_PART_WAKER] = "waker",         [PT_PART_SLOT_NEW] = "slot_new",  [PT_PART_END_THREADS] = "end_threads",
        [PT_PART_END_CHARGE] = "end_charge",
    };
    uint64_t any = 0;
    for (int i = 0; i < PT_PART_COUNT; i++)
        any += h->part_runs[i];
    if (!any)
        return;
    fputs("parktrace: self parts", f);
    for (int i = 0; i < PT_PART_COUNT; i++)
        fprintf(f, " %s=%" PRIu64 "x%" PRIu64 "ns", names[i], (uint64_t)h->part_runs[i],
                h->part_runs[i] ? (uint64_t)(h->part_ns[i] / h->part_runs[i]) : 0);
    fputc('\n', f);
}

void selfstats_print(FILE *f, struct tracer *t, const struct pt_services *sv, const struct stacks *stacks,
                     const struct jvm_tracker *jvm, struct self_span span)
{
    struct self_values v = {0};
    struct unwind_tables_usage u;
    struct pt_hot_counts h;
    struct programs ps = {0};
    read_all(&v, &ps, &u, &h, t, sv, stacks, jvm, span);
    for (enum self_line line = SELF_RUN; line < SELF_COLLECTOR; line++)
        self_values_print(f, &v, line, print_programs, &ps);
    print_parts(f, &h);
    if (u.binaries)
        unwind_tables_print(sv->tables, f);
}
