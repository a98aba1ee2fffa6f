/* parktrace's own cost, for users and for the benchmark: CPU time, peak
 * RSS, and the kernel's run-time statistics of each BPF program. */
#ifndef PT_SELFSTATS_H
#define PT_SELFSTATS_H
#include <stdbool.h>
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
};

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
