#include "stack_weights.h"

#include <stdlib.h>
#include <string.h>

int stack_weights_begin(struct stack_weights *sw, uint32_t nslots)
{
    if (nslots > sw->cap) {
        struct stack_weight *w = realloc(sw->w, (size_t)nslots * sizeof(*w));
        if (!w)
            return -1;
        sw->w = w;
        sw->cap = nslots;
    }
    memset(sw->w, 0, (size_t)nslots * sizeof(*sw->w));
    sw->sampled_ns = sw->unsampled_ns = 0;
    return 0;
}

void stack_weights_add(struct stack_weights *sw, uint32_t slot, const struct pt_stack_val *v)
{
    if (slot < sw->cap) {
        sw->w[slot].ns += v->ns;
        sw->w[slot].count += v->count;
    }
}

/* A slot's waits that were timed, whole run: its completed waits' ends. */
static uint64_t timed_waits(const struct pt_slot *s)
{
    uint64_t n = 0;
    for (int e = 0; e < PT_END_COUNT; e++)
        n += __atomic_load_n(&s->ends[e], __ATOMIC_RELAXED);
    return n;
}

void stack_weights_end(struct stack_weights *sw, const struct pt_slot *slots, uint32_t nslots,
                       bool (*select)(void *ctx, uint32_t slot), void *ctx)
{
    for (uint32_t i = 0; i < nslots && i < sw->cap; i++) {
        struct stack_weight *w = &sw->w[i];
        if (select && !select(ctx, i))
            continue;
        uint64_t ns = __atomic_load_n(&slots[i].thread_ns, __ATOMIC_RELAXED), count = timed_waits(&slots[i]);
        w->none = !w->ns && ns;
        w->ns_scale = w->ns ? (double)ns / (double)w->ns : 0;
        w->count_scale = w->count ? (double)count / (double)w->count : 0;
        if (w->ns)
            sw->sampled_ns += ns;
        else
            sw->unsampled_ns += ns;
    }
}

struct pt_stack_val stack_weights_apply(const struct stack_weights *sw, uint32_t slot, const struct pt_stack_val *v,
                                        bool first, const struct pt_slot *s)
{
    struct pt_stack_val out = {0, 0};
    if (slot >= sw->cap)
        return *v;
    const struct stack_weight *w = &sw->w[slot];
    if (w->none) {
        if (first) {
            out.ns = __atomic_load_n(&s->thread_ns, __ATOMIC_RELAXED);
            out.count = timed_waits(s);
        }
        return out;
    }
    out.ns = (uint64_t)((double)v->ns * w->ns_scale + 0.5);
    out.count = (uint64_t)((double)v->count * w->count_scale + 0.5);
    return out;
}

void stack_weights_free(struct stack_weights *sw)
{
    free(sw->w);
    memset(sw, 0, sizeof(*sw));
}
