/* A blocker's figures for one window (docs/contract/metrics.md): plain data, part
 * of the model the writers read, so free of the kernel's headers. */
#ifndef PT_FIGURES_H
#define PT_FIGURES_H
#include <stdint.h>

/* The kernel's PT_HIST_SLOTS log2(ns) buckets (checked in metrics.c). */
#define PT_FIG_HIST_SLOTS 40

struct pt_figures {
    uint64_t window_ns;
    uint64_t parks, wakeups, timeouts, interrupts;
    uint64_t fast_parks;       /* parks that did not block: seen by --probes uprobes only */
    uint64_t parked_now, peak_parked;
    uint64_t thread_time_ns, real_time_ns;
    uint64_t avg_park_ns, max_park_ns, avg_hold_ns;
    double real_util, thread_util, real_life_util, thread_life_util;
    uint64_t threads;
    uint64_t hist[PT_FIG_HIST_SLOTS];
};

/* Bounds of log2 histogram slot I in ns: [lo, hi). */
void metrics_hist_bounds(int i, uint64_t *lo, uint64_t *hi);

#endif
