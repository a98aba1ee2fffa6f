#include "metrics.h"

#include <string.h>

_Static_assert(PT_FIG_HIST_SLOTS == PT_HIST_SLOTS, "figures.h has the kernel's histogram");

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
                    const struct pt_window_extra *extra, int hist_slots, struct pt_figures *out)
{
    memset(out, 0, sizeof(*out));
    out->window_ns = delta(prev->t, cur->t);
    out->parks = delta(prev->parks, cur->parks);
    out->fast_parks = delta(prev->fast_parks, cur->fast_parks);
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
    /* Life: first to last event inside the window; a wait still open at the
     * end keeps the blocker alive up to the window's end. */
    uint64_t first = extra->first_event > prev->t ? extra->first_event : prev->t;
    uint64_t last = out->parked_now ? cur->t : extra->last_event;
    if (!extra->first_event && out->parked_now)
        first = prev->t;
    metrics_derive(out, last > first ? last - first : 0);
    for (int i = 0; i < hist_slots && i < PT_HIST_SLOTS; i++)
        out->hist[i] = delta(prev->hist[i], cur->hist[i]);
}

int metrics_hist_used(uint64_t max_ns)
{
    int top = max_ns ? 63 - __builtin_clzll(max_ns) : 0;
    return top < PT_HIST_SLOTS ? top + 1 : PT_HIST_SLOTS;
}

void metrics_derive(struct pt_figures *f, uint64_t life_ns)
{
    f->avg_park_ns = metrics_avg_park(f->thread_time_ns, f->parks);
    f->avg_hold_ns = metrics_avg_hold(f->real_time_ns, f->parks, f->parked_now);
    f->real_util = f->thread_util = f->real_life_util = f->thread_life_util = 0;
    if (f->window_ns) {
        f->real_util = (double)f->real_time_ns / (double)f->window_ns;
        f->thread_util = (double)f->thread_time_ns / (double)f->window_ns;
    }
    if (life_ns) {
        f->real_life_util = (double)f->real_time_ns / (double)life_ns;
        f->thread_life_util = (double)f->thread_time_ns / (double)life_ns;
        if (f->real_life_util > 1)
            f->real_life_util = 1;
    }
}

void metrics_merge(struct pt_figures *into, const struct pt_figures *add)
{
    into->parks += add->parks;
    into->fast_parks += add->fast_parks;
    into->wakeups += add->wakeups;
    into->timeouts += add->timeouts;
    into->interrupts += add->interrupts;
    into->parked_now += add->parked_now;
    into->peak_parked += add->peak_parked;
    into->thread_time_ns += add->thread_time_ns;
    into->real_time_ns += add->real_time_ns;
    if (into->real_time_ns > into->window_ns)
        into->real_time_ns = into->window_ns;
    if (add->max_park_ns > into->max_park_ns)
        into->max_park_ns = add->max_park_ns;
    into->threads += add->threads;
    for (int i = 0; i < PT_HIST_SLOTS; i++)
        into->hist[i] += add->hist[i];
    /* A group's life is taken as the whole window. */
    metrics_derive(into, into->window_ns);
}

void metrics_hist_bounds(int i, uint64_t *lo, uint64_t *hi)
{
    *lo = i == 0 ? 0 : 1ULL << i;
    *hi = 1ULL << (i + 1);
}
