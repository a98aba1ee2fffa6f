/* The metric arithmetic of docs/contract/metrics.md, including the thesis's worked
 * example (3.7.10-11). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "metrics.h"

#define MS 1000000ULL

static void thesis_example(void)
{
    /* 71 324 ms of thread time over 90 parks: 792.49 ms per park. */
    uint64_t avg = metrics_avg_park(71324 * MS, 90);
    CHECK(llabs((long long)avg - 792488888LL) < 1000, "avg park 71324ms/90 = %.2fms", avg / 1e6);
    CHECK(fabs(avg / 1e6 - 792.49) < 0.005, "avg park rounds to 792.49ms");
    /* 1 784 ms of real time over 90 - 62 completed parks: 63.71 ms hold. */
    uint64_t hold = metrics_avg_hold(1784 * MS, 90, 62);
    CHECK(fabs(hold / 1e6 - 63.71) < 0.005, "avg hold 1784ms/(90-62) = %.2fms", hold / 1e6);
    CHECK(metrics_avg_hold(1784 * MS, 62, 62) == 0, "avg hold is 0 when every park is still parked");
    CHECK(metrics_avg_park(5, 0) == 0, "avg park is 0 without parks");
}

static void window_split(void)
{
    /* Two snapshots 1 s apart: 3 waits began, 2 ended, one still parked. */
    struct pt_counters prev = {.t = 10 * 1000 * MS, .parks = 7, .thread_ns = 400 * MS, .real_ns = 300 * MS};
    struct pt_counters cur = prev;
    cur.t += 1000 * MS;
    cur.parks += 3;
    cur.ends[PT_END_WOKEN] = 2;
    cur.thread_ns += 900 * MS;
    cur.real_ns += 600 * MS;
    cur.parked_now = 1;
    cur.hist[20] = 2;
    struct pt_window_extra extra = {.peak_parked = 2, .max_park_ns = 350 * MS, .threads = 3,
                                    .first_event = prev.t + 200 * MS, .last_event = prev.t + 800 * MS};
    struct pt_figures f;
    metrics_window(&prev, &cur, &extra, PT_HIST_SLOTS, &f);
    CHECK(f.window_ns == 1000 * MS, "window is the time between snapshots");
    CHECK(f.parks == 3 && f.wakeups == 2 && f.parked_now == 1, "counts are differences");
    CHECK(f.thread_time_ns == 900 * MS && f.real_time_ns == 600 * MS, "times are differences");
    CHECK(f.avg_park_ns == 300 * MS, "avg park = thread time / parks");
    CHECK(f.avg_hold_ns == 300 * MS, "avg hold = real time / (parks - parked now)");
    CHECK(fabs(f.real_util - 0.6) < 1e-9 && fabs(f.thread_util - 0.9) < 1e-9, "utilisations over W");
    /* Life: first event at +200ms, still parked at the end, so 800 ms. */
    CHECK(fabs(f.real_life_util - 0.75) < 1e-9, "real life util = 600/800 (%.3f)", f.real_life_util);
    CHECK(fabs(f.thread_life_util - 1.125) < 1e-9, "thread life util = 900/800");
    CHECK(f.peak_parked == 2 && f.max_park_ns == 350 * MS && f.threads == 3, "window extras pass through");
    CHECK(f.hist[20] == 2, "histogram is a difference");
}

static void stuck_lock(void)
{
    /* A thread parked through the whole window: the window is never 0. */
    struct pt_counters prev = {.t = 0, .parks = 1, .thread_ns = 5 * MS, .real_ns = 5 * MS, .parked_now = 1};
    struct pt_counters cur = prev;
    cur.t = 1000 * MS;
    cur.thread_ns += 1000 * MS;
    cur.real_ns += 1000 * MS;
    struct pt_window_extra extra = {.peak_parked = 1};
    struct pt_figures f;
    metrics_window(&prev, &cur, &extra, PT_HIST_SLOTS, &f);
    CHECK(f.thread_time_ns == 1000 * MS && f.real_util == 1.0, "a stuck waiter fills the window");
    CHECK(f.parks == 0 && f.avg_hold_ns == 0, "no new parks: no hold estimate");
    CHECK(fabs(f.real_life_util - 1.0) < 1e-9, "life spans the window while parked");
}

static void hist_bounds(void)
{
    uint64_t lo, hi;
    metrics_hist_bounds(0, &lo, &hi);
    CHECK(lo == 0 && hi == 2, "slot 0 is [0,2)");
    metrics_hist_bounds(10, &lo, &hi);
    CHECK(lo == 1024 && hi == 2048, "slot 10 is [1024,2048)");
}

static void hist_used(void)
{
    /* A report reads only the slots up to the longest wait's: each slot's
     * first and last value needs just that many. */
    for (int i = 0; i < PT_HIST_SLOTS - 1; i++) {
        uint64_t lo, hi;
        metrics_hist_bounds(i, &lo, &hi);
        CHECK(metrics_hist_used(lo) == i + 1 && metrics_hist_used(hi - 1) == i + 1,
              "slot %d [%llu,%llu) is the last one read", i, (unsigned long long)lo, (unsigned long long)hi);
    }
    CHECK(metrics_hist_used(UINT64_MAX) == PT_HIST_SLOTS, "the open last slot is read for the longest waits");
    /* A window whose slots above the longest wait are left unread. */
    struct pt_counters prev = {.t = 0}, cur = {.t = 1000 * MS, .parks = 1, .thread_ns = 3000};
    cur.hist[11] = 1;
    cur.hist[30] = 999;     /* not read: past the longest wait */
    struct pt_window_extra extra = {.max_park_ns = 3000};
    struct pt_figures f;
    metrics_window(&prev, &cur, &extra, metrics_hist_used(3000), &f);
    CHECK(f.hist[11] == 1 && f.hist[30] == 0, "only slots up to the longest wait's are read");
}

static void merge(void)
{
    struct pt_figures a = {.window_ns = 1000 * MS, .parks = 10, .wakeups = 9, .parked_now = 1,
                           .peak_parked = 2, .thread_time_ns = 500 * MS, .real_time_ns = 400 * MS,
                           .max_park_ns = 90 * MS, .threads = 2};
    struct pt_figures b = a;
    b.parks = 30;
    b.thread_time_ns = 900 * MS;
    b.real_time_ns = 700 * MS;
    b.max_park_ns = 120 * MS;
    a.hist[5] = 3;
    b.hist[5] = 4;
    metrics_merge(&a, &b);
    CHECK(a.parks == 40 && a.wakeups == 18 && a.parked_now == 2 && a.threads == 4, "counts add");
    CHECK(a.thread_time_ns == 1400 * MS && a.hist[5] == 7, "thread time and histogram add");
    CHECK(a.real_time_ns == 1000 * MS, "real time adds, capped at the window");
    CHECK(a.max_park_ns == 120 * MS && a.peak_parked == 4, "max is the longer; peak an upper bound");
    CHECK(a.avg_park_ns == 35 * MS && fabs(a.thread_util - 1.4) < 1e-9, "averages recomputed");
    CHECK(a.avg_hold_ns == 1000 * MS / 38, "hold recomputed from the merged counts");
}

int main(void)
{
    merge();
    thesis_example();
    window_split();
    stuck_lock();
    hist_bounds();
    hist_used();
    return CHECK_DONE();
}
