/* Each blocker's own first entries of stack_time and waker_time, kept in
 * its slot. Included by parktrace.bpf.c right after slots.bpf.h, whose
 * maps it reads.
 *
 * Owns: slot_claim, slot_own, slot_pair, stack_val_at.
 *
 * Shared: pt_slot's fifth line (own_key, pair_key, own, pair) with user
 * space, which reads it after each table (user/kernel/stack_maps.c) and
 * zeroes it with the slot as it recycles. */
#ifndef PT_OWN_ENTRIES_BPF_H
#define PT_OWN_ENTRIES_BPF_H

/* A blocker's first waiter stack and first (waiter, waker) pair of its
 * first waiter's process live in its slot (line 4): a database's blockers
 * are mostly objects waited on a few times from one call path, and each
 * entry in stack_time or waker_time cost user space a read and a delete
 * (each under a bucket lock) as the blocker left. Claimed by
 * compare-and-swap, so an entry is in the slot or in its table, never
 * both; user space reads both (stack_maps.c). CLAIM: take a free one;
 * *MADE: this call took it. NULL: the entry is the table's. */
static __always_inline __u64 *slot_claim(__u64 *key, __u64 want, bool claim, bool *made)
{
    __u64 have = *(volatile __u64 *)key;
    *made = false;
    if (have == want)
        return key;
    if (have || !claim)
        return NULL;
    have = __sync_val_compare_and_swap(key, 0, want);
    if (have && have != want)
        return NULL;
    *made = !have;
    return key;
}

static __always_inline struct pt_stack_val *slot_own(struct pt_slot *s, __s32 sid, __u32 tgid, bool claim,
                                                     bool *made)
{
    *made = false;
    if (!s || sid < 0 || tgid != s->first_tgid)
        return NULL;
    return slot_claim(&s->own_key, (__u32)sid + 1, claim, made) ? &s->own : NULL;
}

static __always_inline struct pt_waker_val *slot_pair(struct pt_slot *s, __s32 sid, __u32 tgid, __s32 waker,
                                                      __u32 waker_tgid, bool claim, bool *made)
{
    *made = false;
    if (!s || sid < 0 || waker < 0 || tgid != s->first_tgid || waker_tgid != tgid)
        return NULL;
    __u64 want = ((__u64)((__u32)waker + 1) << 32) | ((__u32)sid + 1);
    return slot_claim(&s->pair_key, want, claim, made) ? &s->pair : NULL;
}

/* Stack SID's entry (process TGID) on slot S (index IDX): its slot's or
 * its table's, NULL when neither has it. */
static __always_inline struct pt_stack_val *stack_val_at(struct pt_slot *s, __u32 idx, __s32 sid, __u32 tgid)
{
    bool made;
    struct pt_stack_val *v = slot_own(s, sid, tgid, false, &made);
    if (v)
        return v;
    struct pt_stack_key k = { .slot = idx, .stack_id = sid, .tgid = tgid };
    return bpf_map_lookup_elem(&stack_time, &k);
}

#endif
