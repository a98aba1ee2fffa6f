/* Every figure --self-stats prints, in one registry: its name (as printed,
 * key=value), its unit, what it says and where it is counted. The printer
 * (selfstats.c) and docs/self-stats.md (tools/self_stats_doc.py, checked
 * by make check-docs) are made from it. */
#ifndef PT_SELF_COUNTERS_H
#define PT_SELF_COUNTERS_H
#include <stdint.h>
#include <stdio.h>

/* The "parktrace: self" lines, in the order they are printed. */
enum self_line { SELF_RUN, SELF_MEMORY, SELF_MOUNTS, SELF_DROPS, SELF_JVMS, SELF_COLLECTOR, SELF_LINES };

enum self_format {
    SELF_UINT,      /* an unsigned count */
    SELF_INT,       /* a signed number (an error code) */
    SELF_FIXED1,    /* a decimal, one place (milliseconds) */
    SELF_FIXED3,    /* a decimal, three places (seconds, a percentage) */
    SELF_PROGRAMS,  /* not a figure: each BPF program's runs x mean ns */
};

struct self_counter {
    const char *name;
    const char *unit;
    enum self_line line;
    enum self_format format;
    const char *help;
    const char *where;   /* the code that counts it */
};

#define SELF_COUNTERS(X)                                                                                      \
    X(CPU_S, "cpu_s", "s", SELF_RUN, SELF_FIXED3, "parktrace's own CPU time, user and system",                 \
      "user/sources/selfstats.c")                                                                                            \
    X(CPU_PCT, "cpu_pct", "%", SELF_RUN, SELF_FIXED3, "the same over parktrace's wall time, its start included",   \
      "user/sources/selfstats.c")                                                                             \
    X(CPU_STEADY_PCT, "cpu_steady_pct", "%", SELF_RUN, SELF_FIXED3,                                          \
      "its CPU from 2 s after the probes were attached to the final report, over that time (0: under 3 s)",   \
      "user/sources/selfstats.c")                                                                                        \
    X(RSS_KB, "rss_kb", "KiB", SELF_RUN, SELF_UINT, "parktrace's peak resident memory (VmHWM)",                \
      "user/sources/selfstats.c")                                                                                    \
    X(PROGRAMS, "PROGRAM", "runs x ns", SELF_RUN, SELF_PROGRAMS,                                              \
      "each BPF program that runs per event: its runs and mean run time", "user/kernel/bpf_stats.c")               \
    X(BPF_RUNS, "bpf_runs", "runs", SELF_RUN, SELF_UINT, "runs of all the BPF programs", "user/kernel/bpf_stats.c") \
    X(BPF_NS_PER_RUN, "bpf_ns_per_run", "ns", SELF_RUN, SELF_UINT, "their mean run time",                     \
      "user/kernel/bpf_stats.c")                                                                                   \
    X(SWITCH_P99, "sched_switch_p99_ns", "ns", SELF_RUN, SELF_UINT,                                           \
      "99th percentile of sched_switch's run time (one run in 16 per CPU, within a quarter of a power of two)", \
      "bpf/sched.bpf.h")                                                                                      \
    X(WAKING_P99, "sched_waking_p99_ns", "ns", SELF_RUN, SELF_UINT, "the same for sched_waking",              \
      "bpf/sched.bpf.h")                                                                                      \
    X(END_STACKS, "end_stacks", "stacks", SELF_RUN, SELF_UINT, "long waits whose stack was taken as they ended", \
      "bpf/stacks.bpf.h")                                                                                     \
    X(END_STACKS_LOST, "end_stacks_lost", "stacks", SELF_RUN, SELF_UINT,                                      \
      "long waits whose stack could not be taken as they ended", "bpf/stacks.bpf.h")                          \
    X(NAMING_REFUSED, "naming_stacks_refused", "stacks", SELF_RUN, SELF_UINT,                                 \
      "naming stacks refused, the budget two seconds in debt", "bpf/budget.bpf.h")                           \
    X(GO_REPARKS, "go_reparks", "waits", SELF_RUN, SELF_UINT,                                                 \
      "goroutine parks that were a second or later park of one semaphore acquire", "bpf/go_uprobes.bpf.h")       \
    X(GO_PARK_REENTRIES, "go_park_reentries", "runs", SELF_RUN, SELF_UINT,                                    \
      "gopark probe runs for a park already open: its prologue went through morestack", "bpf/go_uprobes.bpf.h") \
    X(CHAINS_UNREAD, "chains_unread", "waits", SELF_RUN, SELF_UINT,                                          \
      "waits that kept their stack but had no chain read: the chains' budget spent", "bpf/chains.bpf.h")         \
    X(STACK_SPENT_PCT, "stack_budget_spent_pct", "%", SELF_RUN, SELF_FIXED3,                                  \
      "stack work charged to --stack-budget on the busiest CPU, over the run's wall time", "bpf/budget.bpf.h") \
    X(CHAIN_SPENT_PCT, "chain_budget_spent_pct", "%", SELF_RUN, SELF_FIXED3,                                  \
      "wait chains' reads charged to their own budget (as large as the stacks') on the busiest CPU, over the run's wall time", \
      "bpf/chains.bpf.h")                                                                                     \
    X(UNWIND_BINARIES, "unwind_binaries", "binaries", SELF_RUN, SELF_UINT, "binaries with an unwind table",    \
      "user/unwind/unwind_tables.c")                                                                               \
    X(UNWIND_NO_CFI, "unwind_no_cfi", "binaries", SELF_RUN, SELF_UINT, "binaries without usable CFI",          \
      "user/unwind/unwind_tables.c")                                                                               \
    X(UNWIND_ROWS, "unwind_rows", "rows", SELF_RUN, SELF_UINT, "rows in the kernel's unwind tables",           \
      "user/unwind/unwind_tables.c")                                                                               \
    X(UNWIND_TABLE_KB, "unwind_table_kb", "KiB", SELF_RUN, SELF_UINT, "kernel memory of the unwind tables",    \
      "user/unwind/unwind_tables.c")                                                                               \
    X(UNWIND_BUILD_S, "unwind_build_s", "s", SELF_RUN, SELF_FIXED3, "CPU time spent building unwind tables",   \
      "user/unwind/unwind_tables.c")                                                                               \
    X(UNWIND_CACHED, "unwind_cached", "tables", SELF_RUN, SELF_UINT, "tables read from the unwind cache",      \
      "user/unwind/unwind_cache.c")                                                                                \
    X(UNWIND_CACHE_STORED, "unwind_cache_stored", "tables", SELF_RUN, SELF_UINT,                              \
      "tables written to the unwind cache", "user/unwind/unwind_cache.c")                                          \
    X(UNWIND_WALKS, "unwind_walks", "walks", SELF_RUN, SELF_UINT, "stacks walked in the kernel by CFI",        \
      "bpf/unwind.bpf.h")                                                                                     \
    X(UNWIND_NS_PER_WALK, "unwind_ns_per_walk", "ns", SELF_RUN, SELF_UINT, "their mean time",                 \
      "bpf/unwind.bpf.h")                                                                                     \
    X(UNWIND_FRAMES_PER_WALK, "unwind_frames_per_walk", "frames", SELF_RUN, SELF_UINT,                        \
      "their mean number of frames", "bpf/unwind.bpf.h")                                                      \
    X(UNWIND_OVER_BUDGET, "unwind_over_budget", "binaries", SELF_MEMORY, SELF_UINT,                           \
      "binaries refused a table past the 256 MiB or 4096 tables", "user/unwind/unwind_binaries.c")                 \
    X(UNWIND_OWNER_REFUSED, "unwind_owner_refused", "binaries", SELF_MEMORY, SELF_UINT,                       \
      "a user's binaries refused past their owner's share", "user/unwind/unwind_binaries.c")                       \
    X(UNWIND_EVICTED, "unwind_evicted", "tables", SELF_MEMORY, SELF_UINT,                                     \
      "tables no live process mapped, let go for room", "user/unwind/unwind_binaries.c")                           \
    X(UNWIND_KNOWN, "unwind_known", "binaries", SELF_MEMORY, SELF_UINT, "binaries known (65 536 at most)",     \
      "user/unwind/unwind_binaries.c")                                                                             \
    X(UNWIND_FORGOTTEN, "unwind_forgotten", "binaries", SELF_MEMORY, SELF_UINT,                               \
      "binaries without a table forgotten for room", "user/unwind/unwind_binaries.c")                              \
    X(UNWIND_FILES_SKIPPED, "unwind_files_skipped", "files", SELF_MEMORY, SELF_UINT,                          \
      "files a publishing left for later (1 024 opened at most)", "user/unwind/unwind_tables.c")                   \
    X(SYMBOL_KB, "symbol_kb", "KiB", SELF_MEMORY, SELF_UINT, "memory of the symbol tables (256 MiB at most)",  \
      "user/proc/elfsyms.c")                                                                                       \
    X(SYMBOLS_EVICTED, "symbols_evicted", "tables", SELF_MEMORY, SELF_UINT,                                   \
      "symbol tables let go for room, read again when needed", "user/proc/elfsyms.c")                              \
    X(SYMBOL_FILES, "symbol_files", "files", SELF_MEMORY, SELF_UINT, "files the symbol cache knows",           \
      "user/proc/elfsyms.c")                                                                                       \
    X(SYMBOL_FILES_REFUSED, "symbol_files_refused", "files", SELF_MEMORY, SELF_UINT,                          \
      "user-writable files refused past their half of the cache", "user/proc/elfsyms.c")                           \
    X(BPF_MAPS_KB, "bpf_maps_kb", "KiB", SELF_MEMORY, SELF_UINT, "kernel memory of parktrace's maps",          \
      "user/kernel/bpf_stats.c")                                                                                   \
    X(STACK_ENTRIES, "stack_entries", "entries", SELF_MEMORY, SELF_UINT, "entries of the stack cache",         \
      "user/stacks/stacks.c")                                                                                      \
    X(STACK_TEMPLATES, "stack_templates", "entries", SELF_MEMORY, SELF_UINT,                                  \
      "of them, kernel-unwound stacks named once per process", "user/stacks/stacks.c")                             \
    X(STACK_TEMPLATES_TRIMMED, "stack_templates_trimmed", "entries", SELF_MEMORY, SELF_UINT,                  \
      "templates unused for a minute let go", "user/stacks/stacks_forget.c")                                       \
    X(STACK_TEMPLATES_COMPACT, "stack_templates_compact", "entries", SELF_MEMORY, SELF_UINT,                  \
      "unused templates kept as pcs alone", "user/stacks/stacks_forget.c")                                         \
    X(STACK_KB, "stack_kb", "KiB", SELF_MEMORY, SELF_UINT, "memory of the stack cache", "user/stacks/stacks.c")     \
    X(PROCMAPS, "procmaps", "processes", SELF_MEMORY, SELF_UINT, "processes whose mappings are held",          \
      "user/proc/procmaps.c")                                                                                      \
    X(PROCMAPS_KB, "procmaps_kb", "KiB", SELF_MEMORY, SELF_UINT, "memory of those mappings", "user/proc/procmaps.c") \
    X(MOUNT_OPENS_KILLED, "user_mount_opens_killed", "opens", SELF_MOUNTS, SELF_UINT,                         \
      "opens through a user's mounts killed at their deadline", "user/base/deadline_open.c")                       \
    X(MOUNT_OPENS_STUCK, "user_mount_opens_stuck", "opens", SELF_MOUNTS, SELF_UINT,                           \
      "of them, whose task did not die at once", "user/base/deadline_open.c")                                      \
    X(DROP_BLOCKERS, "drop_blockers", "events", SELF_DROPS, SELF_UINT, "waits not recorded: the blocker table was full", \
      "bpf/slots.bpf.h")                                                                                      \
    X(DROP_WAITING, "drop_waiting", "events", SELF_DROPS, SELF_UINT,                                          \
      "waits not recorded: no memory for the wait, or its end was lost", "bpf/slots.bpf.h")                                 \
    X(DROP_THREADS, "drop_threads", "events", SELF_DROPS, SELF_UINT, "threads not counted: the thread set was full (a row's threads undercounts)", \
      "bpf/slots.bpf.h")                                                                                      \
    X(DROP_STACK_ENTRIES, "drop_stack_entries", "events", SELF_DROPS, SELF_UINT,                              \
      "(blocker, stack) times lost: their table was full (collapsed output short)", "bpf/stacks.bpf.h")                                \
    X(DROP_STACKS, "drop_stacks", "stacks", SELF_DROPS, SELF_UINT, "stacks not stored: the stack map was full, or a collision",          \
      "bpf/stacks.bpf.h")                                                                                     \
    X(DROP_SAMPLES, "drop_samples", "stacks", SELF_DROPS, SELF_UINT, "stack copies not stored: their table was full",  \
      "bpf/stacks.bpf.h")                                                                                     \
    X(DROP_EXECS, "drop_execs", "events", SELF_DROPS, SELF_UINT, "programs started, not queued for JVM discovery (a new JVM may be found late)", \
      "bpf/lifetimes.bpf.h")                                                                                  \
    X(DROP_LIVES, "drop_lives", "events", SELF_DROPS, SELF_UINT, "lives of threads before their process was watched, not kept (CSP)",            \
      "bpf/lifetimes.bpf.h")                                                                                  \
    X(DROP_CHAINS, "drop_chains", "events", SELF_DROPS, SELF_UINT,                                          \
      "parts of waits not charged to their wait chain (its table full, or its holder re-reading it)",          \
      "bpf/chains.bpf.h")                                                                                     \
    X(LOST_ENDS_RECOVERED, "lost_ends_recovered", "waits", SELF_DROPS, SELF_UINT,                             \
      "waits whose end the scheduler's tracepoint missed, ended from their thread's CPU time", "bpf/sched.bpf.h") \
    X(STACK_BUDGET_SKIPS, "stack_budget_skips", "stacks", SELF_DROPS, SELF_UINT,                              \
      "stacks left out over --stack-budget, counted as each gap ends (not a thread's gap still open)", "bpf/budget.bpf.h")                                              \
    X(STACKS_LOST, "stacks_lost", "stacks", SELF_DROPS, SELF_UINT,                                            \
      "kernel-unwound stacks let go before they were copied", "user/stacks/stacks.c")                              \
    X(DROP_STACKS_TABLE, "drop_stacks_table", "stacks", SELF_DROPS, SELF_UINT,                                \
      "stacks the frame-pointer table refused", "bpf/stacks.bpf.h")                                           \
    X(DROP_STACKS_TABLE_ERR, "drop_stacks_table_err", "errno", SELF_DROPS, SELF_INT, "its last error",         \
      "bpf/stacks.bpf.h")                                                                                     \
    X(DROP_STACKS_FP, "drop_stacks_fp", "stacks", SELF_DROPS, SELF_UINT, "frame-pointer walks that failed",    \
      "bpf/stacks.bpf.h")                                                                                     \
    X(DROP_STACKS_FP_ERR, "drop_stacks_fp_err", "errno", SELF_DROPS, SELF_INT, "their last error",            \
      "bpf/stacks.bpf.h")                                                                                     \
    X(JVMS, "jvms", "JVMs", SELF_JVMS, SELF_UINT, "JVMs followed now", "user/jvm/jvm_tracker.c")                   \
    X(JVM_ENTRIES, "jvm_entries", "entries", SELF_JVMS, SELF_UINT, "JVM table entries used (256 at most)",     \
      "user/jvm/jvm_tracker.c")                                                                                    \
    X(JVMS_EVICTED, "jvms_evicted", "JVMs", SELF_JVMS, SELF_UINT, "exited JVMs let go for room",              \
      "user/jvm/jvm_tracker.c")                                                                                    \
    X(JVMS_GIVEN_UP, "jvms_given_up", "JVMs", SELF_JVMS, SELF_UINT, "live JVMs whose thread list was unreadable", \
      "user/jvm/jvm_tracker.c")                                                                                    \
    X(JVM_LISTS_UNREAD, "jvm_lists_unread", "refreshes", SELF_JVMS, SELF_UINT,                                \
      "thread-list reads that failed, the threads last read kept", "user/jvm/jvm_tracker.c")                       \
    X(JAVA_THREADS_REFUSED, "java_threads_refused", "threads", SELF_JVMS, SELF_UINT,                          \
      "Java threads past their JVM's owner's share", "user/jvm/jvm_tracker.c")                                     \
    X(JVM_CANDIDATES_EVICTED, "jvm_candidates_evicted", "processes", SELF_JVMS, SELF_UINT,                    \
      "processes that might be JVMs let go for room", "user/jvm/jvm_candidates.c")                                 \
    X(JVM_PROBES_REFUSED, "jvm_probes_refused", "files", SELF_JVMS, SELF_UINT,                                \
      "libjvm files not probed past their owner's share", "user/jvm/jvm_start.c")                                  \
    X(JVMS_HEAP_READS_KEPT, "jvms_heap_reads_kept", "JVMs", SELF_JVMS, SELF_UINT,                             \
      "JVMs whose parks keep their heap reads between safepoints", "user/jvm/jvm_start.c")                         \
    X(SAFEPOINT_EDGES, "safepoint_edges", "edges", SELF_JVMS, SELF_UINT, "safepoint starts and ends seen",     \
      "bpf/jvm.bpf.h")                                                                                        \
    X(CODE_RANGES_LATE, "jvm_code_ranges_late", "JVMs", SELF_JVMS, SELF_UINT,                                 \
      "JVMs found before their interpreter and code cache were set up, read again later",                    \
      "user/jvm/jvm_tracker.c")                                                                               \
    X(GO_PROCESSES, "go_processes", "processes", SELF_JVMS, SELF_UINT,                                         \
      "Go processes whose goroutine parks are read (docs/go.md)", "user/golang/go_tracker.c")                 \
    X(GO_UNSUPPORTED, "go_unsupported", "processes", SELF_JVMS, SELF_UINT,                                     \
      "Go processes whose layout neither their DWARF nor the version table gives", "user/golang/go_tracker.c") \
    X(GO_REFUSED, "go_refused", "processes", SELF_JVMS, SELF_UINT,                                             \
      "Go processes whose binary could not be probed", "user/golang/go_tracker.c")                            \
    X(RETIRED_SITES, "retired_sites", "sites", SELF_COLLECTOR, SELF_UINT, "recycled blockers' sites kept",     \
      "user/sources/retired.c")                                                                                    \
    X(RETIRED_STACKS, "retired_stacks", "stacks", SELF_COLLECTOR, SELF_UINT, "their stacks kept",             \
      "user/sources/retired.c")                                                                                    \
    X(RETIRED_FRAMES_KB, "retired_frames_kb", "KiB", SELF_COLLECTOR, SELF_UINT, "their frames' memory",       \
      "user/sources/retired.c")                                                                                    \
    X(RETIRED_KB, "retired_kb", "KiB", SELF_COLLECTOR, SELF_UINT, "all the recycled blockers' memory",        \
      "user/sources/retired.c")                                                                                    \
    X(RETIRED_BUDGET_KB, "retired_budget_kb", "KiB", SELF_COLLECTOR, SELF_UINT, "--recycled-budget",          \
      "user/cli.c")                                                                                                \
    X(RETIRED_FOLDS, "retired_folds", "folds", SELF_COLLECTOR, SELF_UINT,                                     \
      "times they were folded to stay in the budget", "user/sources/retired.c")                                    \
    X(PHASES, "phases", "phases", SELF_COLLECTOR, SELF_UINT, "CSP phases kept", "user/sources/phases.c")            \
    X(HEAP_USED_KB, "heap_used_kb", "KiB", SELF_COLLECTOR, SELF_UINT, "malloc's memory in use (mallinfo2)",   \
      "user/sources/collect.c")                                                                                    \
    X(HEAP_FREE_KB, "heap_free_kb", "KiB", SELF_COLLECTOR, SELF_UINT, "malloc's free memory", "user/sources/collect.c") \
    X(HEAP_MMAP_KB, "heap_mmap_kb", "KiB", SELF_COLLECTOR, SELF_UINT, "malloc's mapped blocks",               \
      "user/sources/collect.c")                                                                                    \
    X(RECYCLE_GAP_MAX_MS, "recycle_gap_max_ms", "ms", SELF_COLLECTOR, SELF_FIXED1,                            \
      "the longest time between two recyclings", "user/sources/collect_recycle.c")                                 \
    X(RECYCLE_LATE, "recycle_late", "recyclings", SELF_COLLECTOR, SELF_UINT, "recyclings over 200 ms late",    \
      "user/sources/collect_recycle.c")                                                                            \
    X(RECYCLE_MAX_MS, "recycle_max_ms", "ms", SELF_COLLECTOR, SELF_FIXED1, "the longest recycling pass",       \
      "user/sources/collect.c")                                                                                    \
    X(JVM_TICK_MAX_MS, "jvm_tick_max_ms", "ms", SELF_COLLECTOR, SELF_FIXED1,                                  \
      "the longest housekeeping of exited processes and JVMs", "user/sources/collect.c")                           \
    X(SAMPLES_MAX_MS, "samples_max_ms", "ms", SELF_COLLECTOR, SELF_FIXED1,                                    \
      "the longest unwinding of stack copies", "user/sources/collect_recycle.c")                                   \
    X(RECYCLE_FOLD_MAX_MS, "recycle_fold_max_ms", "ms", SELF_COLLECTOR, SELF_FIXED1,                          \
      "the longest folding of recycled blockers", "user/sources/collect.c")                                        \
    X(RECYCLE_ENTRIES_MAX_MS, "recycle_entries_max_ms", "ms", SELF_COLLECTOR, SELF_FIXED1,                    \
      "the longest handing of table entries to recycled blockers", "user/sources/collect_recycle.c")               \
    X(RECYCLE_FORGET_MAX_MS, "recycle_forget_max_ms", "ms", SELF_COLLECTOR, SELF_FIXED1,                      \
      "the longest forgetting of the stack cache's entries", "user/sources/collect_recycle.c")                     \
    X(RECYCLE_BATCH_MAX, "recycle_batch_max", "blockers", SELF_COLLECTOR, SELF_UINT,                          \
      "the most blockers recycled in one pass", "user/sources/collect_recycle.c")                                  \
    X(SLOTS_TOUCHED, "slots_touched", "slots", SELF_COLLECTOR, SELF_UINT,                                     \
      "the most blocker slots ever taken at once", "user/kernel/loader.c")                                         \
    X(CSP_PROCS, "csp_procs", "processes", SELF_COLLECTOR, SELF_UINT, "processes whose thread time CSP follows", \
      "user/sources/csp.c")                                                                                        \
    X(CSP_EVICTED, "csp_evicted", "processes", SELF_COLLECTOR, SELF_UINT,                                     \
      "exited processes let go for new ones (their rows lose CSP)", "user/sources/csp.c")                          \
    X(CSP_REFUSED, "csp_refused", "processes", SELF_COLLECTOR, SELF_UINT,                                     \
      "processes not followed: the table held live ones only", "user/sources/csp.c")                               \
    X(JAVA_STACKS_BLIND, "java_stacks_blind", "blockers", SELF_COLLECTOR, SELF_UINT,                          \
      "Java blockers whose first stack still has its Java frames unnamed (walked before the JVM was known)",    \
      "user/sources/collect.c")                                                                                    \
    X(JAVA_BLIND_RETAKES, "java_blind_retakes", "stacks", SELF_COLLECTOR, SELF_UINT,                          \
      "first stacks asked for again because they came so, by the blockers still in the table",                  \
      "user/sources/collect.c")                                                                                    \
    X(CGROUPS, "cgroups", "cgroups", SELF_COLLECTOR, SELF_UINT, "distinct cgroups of the processes read",      \
      "user/proc/cgroup_names.c")                                                                                  \
    X(CGROUPS_OVER, "cgroups_over", "processes", SELF_COLLECTOR, SELF_UINT,                                   \
      "processes whose cgroup was one past the 4 096 kept, read as [other cgroups]", "user/proc/cgroup_names.c")

#define SELF_ENUM(id, ...) SC_##id,
enum self_id { SELF_COUNTERS(SELF_ENUM) SELF_COUNT };
#undef SELF_ENUM

extern const struct self_counter self_counters[SELF_COUNT];

/* One run's figures, by id; unsigned, signed or decimal as each counter's
 * format says. */
struct self_values {
    union {
        uint64_t u;
        int64_t i;
        double d;
    } v[SELF_COUNT];
};

/* Prints line LINE of V ("parktrace: self name=value ..."); PROGRAMS, when
 * not NULL, prints the per-program figures where the registry puts them. */
void self_values_print(FILE *f, const struct self_values *v, enum self_line line,
                       void (*programs)(FILE *f, void *ctx), void *ctx);

#endif
