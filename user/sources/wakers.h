/* Where contention is caused: the kernel's table of wait time per
 * (blocker, waiter stack, waker stack), read whole. */
#ifndef PT_WAKERS_H
#define PT_WAKERS_H
#include <stdint.h>
#include "../bpf/parktrace.h"

struct waker_entry {
    struct pt_waker_key k;
    uint64_t count, ns;              /* weighed for the pair (the waker's share) */
    uint64_t line_count, line_ns;    /* weighed for the waiter's line */
};

struct stack_maps;

struct wakers {
    struct waker_entry *e;
    int n;
};

/* Reads the kernel's waker_time table (cumulative since start); entries
 * with no completed wait yet are skipped. 0, or -1 after one line when out
 * of memory (W is then empty). */
int wakers_read(const struct stack_maps *kernel, struct wakers *w);

/* For each of NSLOTS blockers, its waker stack with the most wait time,
 * summed over the waiters' stacks, into TOP[slot]; count 0 when none.
 * Waker stacks that read the same (STACKS) are one. Reorders W. */
struct stacks;
void wakers_top(struct wakers *w, struct stacks *stacks, uint32_t nslots, struct waker_entry *top);

void wakers_free(struct wakers *w);

#endif
