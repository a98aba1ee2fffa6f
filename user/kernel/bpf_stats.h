/* What the kernel says of parktrace's own BPF side, for --self-stats: its
 * programs' run counts and times, its maps' memory, and the counters its
 * programs keep. The only code that reads them; selfstats.c prints. */
#ifndef PT_BPF_STATS_H
#define PT_BPF_STATS_H
#include <stdint.h>

struct tracer;

/* Turns on the kernel's run-time statistics: a descriptor to close when
 * done, or -1. */
int bpf_stats_enable(void);

/* Calls SEEN for each program run per event (not the syscall programs run
 * once at load), with its run count and total run time. */
void bpf_stats_programs(struct tracer *t, void (*seen)(void *ctx, const char *name, uint64_t runs, uint64_t ns),
                        void *ctx);

/* Kernel memory of parktrace's own maps (the unwind tables' are counted
 * apart), in KiB. */
unsigned long bpf_stats_maps_kb(struct tracer *t);

struct bpf_counters {
    uint64_t lost_ends_recovered;      /* waits whose lost end was recovered */
    uint64_t drop_stacks_table, drop_stacks_fp;   /* stack walks refused, by kind */
    int64_t drop_stacks_table_err, drop_stacks_fp_err;   /* the last error of each */
    uint32_t safepoint_edges;          /* safepoint starts and ends seen */
};
void bpf_stats_counters(struct tracer *t, struct bpf_counters *out);

#endif
