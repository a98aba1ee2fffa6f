/* The figures of docs/contract/metrics.md, computed from two cumulative snapshots of
 * one blocker. Pure arithmetic, no I/O, so it is unit-tested directly. */
#ifndef PT_METRICS_H
#define PT_METRICS_H
#include <stdint.h>
#include "../bpf/parktrace.h"
#include "figures.h"

/* A blocker's cumulative state at time t. thread_ns and real_ns include the
 * parts of waits and busy periods still open at t, so the difference of two
 * snapshots is exactly what fell inside the window between them. */
struct pt_counters {
    uint64_t t;
    uint64_t parks;
    uint64_t ends[PT_END_COUNT];
    uint64_t thread_ns;
    uint64_t real_ns;
    int64_t parked_now;
    uint64_t fast_parks;
    uint64_t hist[PT_HIST_SLOTS];
};

/* What the kernel tracked since the window began, not derivable from the
 * two snapshots. */
struct pt_window_extra {
    uint64_t peak_parked;
    uint64_t max_park_ns;
    uint64_t threads;
    uint64_t first_event;   /* 0 when none in the window */
    uint64_t last_event;
};

uint64_t metrics_avg_park(uint64_t thread_ns, uint64_t parks);
uint64_t metrics_avg_hold(uint64_t real_ns, uint64_t parks, uint64_t parked_now);

/* Figures for the window (prev->t, cur->t]. PREV may be all zero with t set
 * to the run's start, giving the whole run. Of the histograms only the
 * first HIST_SLOTS slots are read: those above the window's longest wait
 * can have gained nothing (metrics_hist_used). */
void metrics_window(const struct pt_counters *prev, const struct pt_counters *cur,
                    const struct pt_window_extra *extra, int hist_slots, struct pt_figures *out);

/* How many histogram slots, from the first, can hold a wait no longer
 * than MAX_NS (the kernel's log2 slots). */
int metrics_hist_used(uint64_t max_ns);

/* Adds blocker ADD's figures into INTO, for rows grouped by class or site.
 * Counts and times add; the longest wait is the longer one; peak_parked and
 * real_time_ns become upper bounds (sums; real time capped at the window),
 * because which waits overlapped across blockers is not known. */
void metrics_merge(struct pt_figures *into, const struct pt_figures *add);

/* Recomputes the averages and utilisations from the counts and times.
 * LIFE_NS is the active life used by the *_life_util figures. */
void metrics_derive(struct pt_figures *f, uint64_t life_ns);

#endif
