#include "wakers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack_maps.h"
#include "stacks.h"

void waker_pairs_bound(const struct pt_waker_key *keys, struct pt_waker_val *vals, uint32_t n,
                       const struct pt_slot *slots, uint32_t nslots)
{
    struct { uint64_t count, ns; } *sum = n ? calloc(nslots ? nslots : 1, sizeof(*sum)) : NULL;
    if (!sum)
        return;     /* out of memory: the pairs as weighed */
    for (uint32_t i = 0; i < n; i++)
        if (keys[i].slot < nslots && keys[i].waker_stack >= 0) {
            sum[keys[i].slot].count += vals[i].count;
            sum[keys[i].slot].ns += vals[i].ns;
        }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot = keys[i].slot;
        if (slot >= nslots || keys[i].waker_stack < 0)
            continue;
        uint64_t woken = __atomic_load_n(&slots[slot].ends[PT_END_WOKEN], __ATOMIC_RELAXED);
        uint64_t waited = __atomic_load_n(&slots[slot].thread_ns, __ATOMIC_RELAXED);
        double f = 1;
        if (sum[slot].count > woken)
            f = (double)woken / (double)sum[slot].count;
        if (sum[slot].ns > waited && (double)waited / (double)sum[slot].ns < f)
            f = (double)waited / (double)sum[slot].ns;
        if (f < 1) {
            vals[i].count = (uint64_t)((double)vals[i].count * f);
            vals[i].ns = (uint64_t)((double)vals[i].ns * f);
        }
    }
    free(sum);
}

int wakers_read(const struct stack_maps *kernel, const struct pt_slot *slots, uint32_t nslots, struct wakers *w)
{
    struct map_dump d = {0};
    memset(w, 0, sizeof(*w));
    if (!stack_maps_have_times(kernel, STACK_TIMES_WAKER))
        return 0;
    stack_maps_dump(kernel, STACK_TIMES_WAKER, &d);
    w->e = malloc((size_t)(d.n ? d.n : 1) * sizeof(*w->e));
    if (!w->e) {
        fprintf(stderr, "parktrace: out of memory for the waker table: this report has no wakers\n");
        map_dump_free(&d);
        return -1;
    }
    const struct pt_waker_key *keys = d.keys;
    struct pt_waker_val *vals = d.vals;
    waker_pairs_bound(keys, vals, d.n, slots, nslots);
    for (uint32_t i = 0; i < d.n; i++)
        if (vals[i].count || vals[i].line_count)
            w->e[w->n++] = (struct waker_entry){keys[i], vals[i].count, vals[i].ns, vals[i].line_count,
                                                vals[i].line_ns};
    map_dump_free(&d);
    return 0;
}

static int by_waker(const void *a, const void *b)
{
    const struct pt_waker_key *x = &((const struct waker_entry *)a)->k, *y = &((const struct waker_entry *)b)->k;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    if (x->waker_tgid != y->waker_tgid)
        return x->waker_tgid < y->waker_tgid ? -1 : 1;
    return x->waker_stack < y->waker_stack ? -1 : x->waker_stack > y->waker_stack;
}

void wakers_top(struct wakers *w, struct stacks *stacks, uint32_t nslots, struct waker_entry *top)
{
    memset(top, 0, (size_t)nslots * sizeof(*top));
    /* Waker stacks that read the same are one call path. */
    for (int i = 0; i < w->n; i++)
        w->e[i].k.waker_stack = stacks_canonical(stacks, w->e[i].k.slot, (int)w->e[i].k.waker_tgid, w->e[i].k.waker_stack);
    qsort(w->e, (size_t)w->n, sizeof(*w->e), by_waker);
    for (int i = 0, j; i < w->n; i = j) {
        /* One run per (blocker, waker stack): its total over waiter stacks. */
        struct waker_entry sum = w->e[i];
        for (j = i + 1; j < w->n && by_waker(&w->e[i], &w->e[j]) == 0; j++) {
            sum.ns += w->e[j].ns;
            sum.count += w->e[j].count;
        }
        if (sum.k.slot < nslots && sum.ns >= top[sum.k.slot].ns)
            top[sum.k.slot] = sum;
    }
}

void wakers_free(struct wakers *w)
{
    free(w->e);
    memset(w, 0, sizeof(*w));
}
