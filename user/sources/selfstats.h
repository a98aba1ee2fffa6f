/* parktrace's own cost, for users and for the benchmark: CPU time, peak
 * RSS, and the kernel's run-time statistics of each BPF program. */
#ifndef PT_SELFSTATS_H
#define PT_SELFSTATS_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct tracer;
struct pt_services;
struct stacks;

/* Turns on kernel.bpf_stats_enabled for as long as parktrace runs; the
 * returned fd keeps it on. Returns -1 when the kernel refuses. */
int selfstats_enable(void);

/* The spans the figures are over: parktrace's life (its CPU was spent
 * over all of it, loading the programs included), and the time it traced. */
struct self_span {
    double life_s, traced_s;
    double steady_s, steady_cpu_s;   /* the steady state's wall and CPU time (main.c) */
};

/* The steady state: from SELF_STEADY_AFTER_NS after the probes were
 * attached to the final report (0: not reached), wall and CPU time at
 * each end. */
struct self_steady {
    uint64_t from_ns, from_cpu_ns, to_ns, to_cpu_ns;
};
#define SELF_STEADY_AFTER_NS 2000000000ULL

/* At each tick of the loop (NOW), the trace having begun at START_NS. */
void self_steady_tick(struct self_steady *s, uint64_t start_ns, uint64_t now);
/* As the final report begins. */
void self_steady_end(struct self_steady *s, uint64_t now);
/* The spans at NOW of a life begun at STARTED_NS, traced from TRACED_NS. */
struct self_span self_span_at(uint64_t started_ns, uint64_t traced_ns, const struct self_steady *s, uint64_t now);

/* Prints one line: "parktrace: self cpu_s=... rss_kb=... bpf_ns_per_run=..."
 * with the per-program run counts and mean run times. */
struct jvm_tracker;
void selfstats_print(FILE *f, struct tracer *t, const struct pt_services *sv, const struct stacks *stacks,
                     const struct jvm_tracker *jvm, struct self_span span);

/* The same figures into V (the collector's line apart: collector_self_values),
 * for /metrics. */
struct self_values;
void selfstats_read(struct self_values *v, struct tracer *t, const struct pt_services *sv,
                    const struct stacks *stacks, const struct jvm_tracker *jvm, struct self_span span);

#endif
