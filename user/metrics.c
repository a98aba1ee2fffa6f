#include "metrics.h"

#include <string.h>

uint64_t metrics_avg_park(uint64_t thread_ns, uint64_t parks)
{
    return parks ? thread_ns / parks : 0;
}

uint64_t metrics_avg_hold(uint64_t real_ns, uint64_t parks, uint64_t parked_now)
{
    /* Thesis 3.7.11: real time over the waits that completed. */
    return parks > parked_now ? real_ns / (parks - parked_now) : 0;
}

static uint64_t delta(uint64_t a, uint64_t b)
{
    return b > a ? b - a : 0;
}

void metrics_window(const struct pt_counters *prev, const struct pt_counters *cur,
                    const struct pt_window_extra *extra, struct pt_figures *out)
{
    memset(out, 0, sizeof(*out));
    out->window_ns = delta(prev->t, cur->t);
    out->parks = delta(prev->parks, cur->parks);
    out->wakeups = delta(prev->ends[PT_END_WOKEN], cur->ends[PT_END_WOKEN]);
    out->timeouts = delta(prev->ends[PT_END_TIMEOUT], cur->ends[PT_END_TIMEOUT]);
    out->interrupts = delta(prev->ends[PT_END_INTERRUPTED], cur->ends[PT_END_INTERRUPTED]);
    out->parked_now = cur->parked_now > 0 ? (uint64_t)cur->parked_now : 0;
    out->thread_time_ns = delta(prev->thread_ns, cur->thread_ns);
    out->real_time_ns = delta(prev->real_ns, cur->real_ns);
    /* Clamp against the kernel's unsynchronised reads: nobody waits longer
     * than the window, and ParkedNow at the end is a waiter of this window. */
    if (out->real_time_ns > out->window_ns)
        out->real_time_ns = out->window_ns;
    out->peak_parked = extra->peak_parked > out->parked_now ? extra->peak_parked : out->parked_now;
    if (out->thread_time_ns > out->window_ns * (out->peak_parked ? out->peak_parked : 1))
        out->thread_time_ns = out->window_ns * (out->peak_parked ? out->peak_parked : 1);
    out->max_park_ns = extra->max_park_ns;
    out->threads = extra->threads;
    out->avg_park_ns = metrics_avg_park(out->thread_time_ns, out->parks);
    out->avg_hold_ns = metrics_avg_hold(out->real_time_ns, out->parks, out->parked_now);
    if (out->window_ns) {
        out->real_util = (double)out->real_time_ns / (double)out->window_ns;
        out->thread_util = (double)out->thread_time_ns / (double)out->window_ns;
    }
    /* Life: first to last event inside the window; a wait still open at the
     * end keeps the blocker alive up to the window's end. */
    uint64_t first = extra->first_event > prev->t ? extra->first_event : prev->t;
    uint64_t last = out->parked_now ? cur->t : extra->last_event;
    if (!extra->first_event && out->parked_now)
        first = prev->t;
    if (last > first) {
        out->real_life_util = (double)out->real_time_ns / (double)(last - first);
        out->thread_life_util = (double)out->thread_time_ns / (double)(last - first);
        if (out->real_life_util > 1)
            out->real_life_util = 1;
    }
    for (int i = 0; i < PT_HIST_SLOTS; i++)
        out->hist[i] = delta(prev->hist[i], cur->hist[i]);
}

void metrics_hist_bounds(int i, uint64_t *lo, uint64_t *hi)
{
    *lo = i == 0 ? 0 : 1ULL << i;
    *hi = 1ULL << (i + 1);
}
