/* --stacks sampled: a blocker's sampled stacks are unbiased estimates of
 * where its waits were; scaled here so that they add up to its exact wait
 * time and count (a ratio estimator), the flame graph's totals are the
 * report's. A blocker with waits but no sample (every walk over budget)
 * has them all on its first waiter's stack, and counts as unsampled. */
#ifndef PT_STACK_WEIGHTS_H
#define PT_STACK_WEIGHTS_H
#include <stdbool.h>
#include <stdint.h>
#include "parktrace.h"

struct stack_weights {
    uint32_t cap;
    struct stack_weight {
        uint64_t ns, count;        /* the samples' sums */
        double ns_scale, count_scale;
        bool none;                 /* waits, but no sample: all on the first stack */
    } *w;
    uint64_t sampled_ns, unsampled_ns;   /* exact time of blockers with and without samples */
};

/* Starts a pass over NSLOTS slots' stack entries. -1 without memory. */
int stack_weights_begin(struct stack_weights *sw, uint32_t nslots);
/* Adds one entry of SLOT (its own or its waker-pair weights). */
void stack_weights_add(struct stack_weights *sw, uint32_t slot, const struct pt_stack_val *v);
/* Computes the scales from the slots' exact totals; SELECT picks the slots
 * the pass is about (NULL: all). */
void stack_weights_end(struct stack_weights *sw, const struct pt_slot *slots, uint32_t nslots,
                       bool (*select)(void *ctx, uint32_t slot), void *ctx);
/* V as it counts for SLOT; FIRST: the entry is the slot's first stack. */
struct pt_stack_val stack_weights_apply(const struct stack_weights *sw, uint32_t slot, const struct pt_stack_val *v,
                                        bool first, const struct pt_slot *s);
void stack_weights_free(struct stack_weights *sw);

#endif
