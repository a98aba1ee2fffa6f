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
 * with no completed wait yet are skipped. Each blocker's pairs are bound
 * by its own whole-run figures in SLOTS (NSLOTS of them: waker_pairs_bound).
 * 0, or -1 after one line when out of memory (W is then empty). */
int wakers_read(const struct stack_maps *kernel, const struct pt_slot *slots, uint32_t nslots, struct wakers *w);

/* Sampled, a (waiter, waker) pair's weights are the product of two odds
 * (down to 1/64 each): one pair taken at 1/4096 stood for 4 096 waits, a
 * mutex's top waker 8 665 wakeups of its 4 788. The N pairs KEYS/VALS of
 * each blocker are scaled down together, where they exceed it, to the
 * blocker's own waits ended by a wake and its waited time, whole run, in
 * SLOTS (NSLOTS): a waker never claims more than the row. Exact pairs
 * (every stack taken) never exceed it, and are left as they are. */
void waker_pairs_bound(const struct pt_waker_key *keys, struct pt_waker_val *vals, uint32_t n,
                       const struct pt_slot *slots, uint32_t nslots);

/* For each of NSLOTS blockers, its waker stack with the most wait time,
 * summed over the waiters' stacks, into TOP[slot]; count 0 when none.
 * Waker stacks that read the same (STACKS) are one. Reorders W. */
struct stacks;
void wakers_top(struct wakers *w, struct stacks *stacks, uint32_t nslots, struct waker_entry *top);

void wakers_free(struct wakers *w);

#endif
