#include "selfstats.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/resource.h>

#include "bpf_stats.h"
#include "deadline_open.h"
#include "elfsyms.h"
#include "jvm_tracker.h"
#include "loader.h"
#include "procmaps.h"
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

/* Each program's runs and mean run time, and their sums. */
struct prog_totals {
    FILE *f;
    uint64_t runs, ns;
};

static void print_program(void *ctx, const char *name, uint64_t runs, uint64_t ns)
{
    struct prog_totals *p = ctx;
    fprintf(p->f, " %s=%" PRIu64 "x%" PRIu64 "ns", name, runs, runs ? ns / runs : 0);
    p->runs += runs;
    p->ns += ns;
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

void selfstats_print(FILE *f, struct tracer *t, const struct pt_services *sv, const struct stacks *stacks,
                     const struct jvm_tracker *jvm, double elapsed_s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    fprintf(f, "parktrace: self cpu_s=%.3f cpu_pct=%.3f rss_kb=%ld", cpu,
            elapsed_s > 0 ? 100 * cpu / elapsed_s : 0, peak_rss_kb());
    struct prog_totals p = {f, 0, 0};
    bpf_stats_programs(t, print_program, &p);
    fprintf(f, " bpf_runs=%" PRIu64 " bpf_ns_per_run=%" PRIu64, p.runs, p.runs ? p.ns / p.runs : 0);
    /* The hot programs' tails, from their own clock (two reads in one run
     * of PT_RUN_EVERY on each CPU; the means above pay a sixteenth of it). */
    struct pt_hot_counts h;
    tracer_hot_counts(t, &h);
    fprintf(f, " sched_switch_p99_ns=%" PRIu64 " sched_waking_p99_ns=%" PRIu64,
            run_p99_ns(h.run_hist[PT_TIMED_SWITCH]), run_p99_ns(h.run_hist[PT_TIMED_WAKING]));
    /* Long waits whose stack was taken as they ended, and those it could not be. */
    fprintf(f, " end_stacks=%" PRIu64 " end_stacks_lost=%" PRIu64, (uint64_t)h.end_stacks,
            (uint64_t)h.end_stacks_lost);
    struct unwind_tables_usage u;
    unwind_tables_usage(sv->tables, &u);
    uint64_t walks = (uint64_t)h.unwind_walks;
    fprintf(f, " unwind_binaries=%zu unwind_no_cfi=%zu unwind_rows=%zu unwind_table_kb=%zu unwind_build_s=%.3f"
               " unwind_cached=%zu unwind_cache_stored=%zu unwind_walks=%" PRIu64 " unwind_ns_per_walk=%" PRIu64 " unwind_frames_per_walk=%" PRIu64 "\n",
            u.binaries, u.without_cfi, u.rows, u.bytes / 1024, u.build_seconds, u.cached, u.cache_stored, walks,
            walks ? (uint64_t)h.unwind_walk_ns / walks : 0,
            walks ? (uint64_t)h.unwind_frames / walks : 0);
    struct elfsyms_usage su;
    elfsyms_usage(sv->syms, &su);
    size_t st_entries, st_templates, st_bytes, procs, procs_bytes;
    stacks_usage(stacks, &st_entries, &st_templates, &st_bytes);
    procmaps_usage(sv->maps, &procs, &procs_bytes);
    fprintf(f, "parktrace: self unwind_over_budget=%zu unwind_owner_refused=%zu unwind_evicted=%zu unwind_known=%zu unwind_forgotten=%zu unwind_files_skipped=%zu symbol_kb=%zu symbols_evicted=%zu symbol_files=%zu symbol_files_refused=%zu bpf_maps_kb=%lu"
               " stack_entries=%zu stack_templates=%zu stack_templates_trimmed=%" PRIu64
               " stack_templates_compact=%d stack_kb=%zu procmaps=%zu procmaps_kb=%zu\n",
            u.over_budget, u.owner_refused, u.evicted, u.known, u.forgotten, u.files_skipped, su.bytes / 1024, su.evicted, su.files, su.refused, bpf_stats_maps_kb(t), st_entries, st_templates,
            stacks_templates_trimmed(stacks), stacks_templates_compact(stacks), st_bytes / 1024, procs,
            procs_bytes / 1024);
    /* Lookups through a user's mounts killed at their deadline (safe_open.c). */
    fprintf(f, "parktrace: self user_mount_opens_killed=%lu user_mount_opens_stuck=%lu\n", deadline_opens_killed(),
            deadline_opens_stuck());
    /* What dropped_events and dropped_stacks are made of, and the waits
     * whose lost end was recovered rather than dropped. */
    static const char *const drop_names[PT_DROP_COUNT] = {
        [PT_DROP_BLOCKERS] = "blockers", [PT_DROP_WAITING] = "waiting", [PT_DROP_THREADS] = "threads",
        [PT_DROP_STACKAGG] = "stack_entries", [PT_DROP_STACKS] = "stacks", [PT_DROP_SAMPLES] = "samples",
        [PT_DROP_EXECS] = "execs", [PT_DROP_LIVES] = "lives",
    };
    fprintf(f, "parktrace: self");
    for (int i = 0; i < PT_DROP_COUNT; i++)
        fprintf(f, " drop_%s=%" PRIu64, drop_names[i], tracer_drop(t, i));
    struct bpf_counters bc;
    bpf_stats_counters(t, &bc);
    fprintf(f, " lost_ends_recovered=%" PRIu64, bc.lost_ends_recovered);
    fprintf(f, " stack_budget_skips=%" PRIu64, (uint64_t)h.stack_budget_skips);
    fprintf(f, " stacks_lost=%" PRIu64, stacks_lost(stacks));
    fprintf(f, " drop_stacks_table=%" PRIu64 " drop_stacks_table_err=%" PRId64 " drop_stacks_fp=%" PRIu64
               " drop_stacks_fp_err=%" PRId64 "\n",
            bc.drop_stacks_table, bc.drop_stacks_table_err, bc.drop_stacks_fp, bc.drop_stacks_fp_err);
    struct jvm_tracker_stats js;
    jvm_tracker_stats(jvm, &js);
    fprintf(f, "parktrace: self jvms=%d jvm_entries=%d jvms_evicted=%" PRIu64 " jvms_given_up=%" PRIu64
               " java_threads_refused=%" PRIu64 " jvm_candidates_evicted=%" PRIu64 " jvm_probes_refused=%" PRIu64
               " jvms_heap_reads_kept=%" PRIu64 " safepoint_edges=%" PRIu32 "\n",
            js.tracked, js.entries, js.evicted, js.given_up, js.threads_refused, js.candidates_evicted, js.probes_refused,
            js.heap_reads_kept, bc.safepoint_edges);
    if (u.binaries)
        unwind_tables_print(sv->tables, f);
}
