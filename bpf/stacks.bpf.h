/* User stacks: stack ids (kernel-unwound by unwind.bpf.h, or the kernel's
 * frame-pointer walk), each thread's stack cache, copies of stacks for
 * unwinding in user space, and the waker's stack at a wake-up. Included by
 * parktrace.bpf.c after slots.bpf.h and jvm.bpf.h.
 *
 * Owns: the maps stacks (frame-pointer stack ids), samples and
 * sample_scratch (stack copies), sample_ready (the ring that wakes user
 * space); take_sample, note_stack, cached_stackid, waiter_stack, user_regs,
 * note_waker. Includes unwind.bpf.h (unwind_bins, unwind_procs, unwind_asked,
 * ustacks, ustack_scratch) and budget.bpf.h (the stack budget).
 *
 * Shared: stacks with jvm_uprobes.bpf.h; sample_ready with unwind.bpf.h;
 * writes entries of stack_time and waker_time (slots.bpf.h) and each
 * thread's record in waits (slots.bpf.h). */
#ifndef PT_STACKS_BPF_H
#define PT_STACKS_BPF_H

/* Frame-pointer stack ids: a process's first waits before its unwind
 * tables come, and every wait with --unwind copy (sized by the loader). A
 * stack whose bucket another holds takes it over rather than being
 * dropped: a map that kept its first stacks would refuse ever more new ones
 * on a long system-wide run (each process's first waits are new stacks).
 * The stack let go was copied for user space (take_sample) when first
 * seen, and is named from that copy. */
struct {
    __uint(type, BPF_MAP_TYPE_STACK_TRACE);
    __uint(max_entries, 16384);
    __type(key, __u32);
    __uint(value_size, PT_MAX_FRAMES * sizeof(__u64));
} stacks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, PT_MAX_SAMPLES);
    __type(key, struct pt_sample_key);
    __type(value, struct pt_sample);
} samples SEC(".maps");

/* Wakes user space when a new sample waits, so it is unwound and its Java
 * frames named while the process lives (a JVM can exit before the next
 * tick). Only new stacks post here; a full ring loses nothing, the sample
 * stays in `samples` for the next tick. */
struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 65536);     /* a JVM's burst of new stacks at start-up */
} sample_ready SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct pt_sample);
} sample_scratch SEC(".maps");

/* Wakes user space for WHAT of process TGID. Global, so that the event's
 * 24 bytes are off its callers' stacks: the Java park's uprobe and the
 * walk under it came to 528 bytes on 6.18 (which rounds each frame to 16). */
__noinline int ready_post(__u32 what, __u32 tgid, __s32 stack_id, __u64 klass)
{
    struct pt_ready ev = { .what = what, .tgid = tgid, .stack_id = stack_id, .klass = klass };
    bpf_ringbuf_output(&sample_ready, &ev, sizeof(ev), 0);
    return 0;
}

/* Wakes user space to name class KLASS of JVM TGID now (note_klass). */
static __always_inline void ask_klass_name(__u32 tgid, __u64 klass)
{
    if (klass)
        ready_post(PT_READY_KLASS, tgid, 0, klass);
}

/* Copies the user stack once per (blocker, process, stack id) for CFI unwinding in
 * user space. Reads in chunks so a stack shorter than the copy still fits. */
static __always_inline void take_sample(__u32 idx, __u32 tgid, __u32 tid, __s32 stack_id)
{
    struct pt_sample_key k = { .slot = idx, .tgid = tgid, .stack_id = stack_id };
    __u32 zero = 0;

    if (bpf_map_lookup_elem(&samples, &k))
        return;
    struct pt_sample *smp = bpf_map_lookup_elem(&sample_scratch, &zero);
    if (!smp)
        return;
    struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
    smp->ip = BPF_CORE_READ(regs, ip);
    smp->sp = BPF_CORE_READ(regs, sp);
    smp->bp = BPF_CORE_READ(regs, bp);
    smp->tid = tid;
    smp->len = 0;
    for (int i = 0; i < PT_STACK_SAMPLE / PT_STACK_CHUNK; i++) {
        if (bpf_probe_read_user(smp->data + i * PT_STACK_CHUNK, PT_STACK_CHUNK,
                                (void *)(smp->sp + i * PT_STACK_CHUNK)))
            break;
        smp->len += PT_STACK_CHUNK;
    }
    long err = bpf_map_update_elem(&samples, &k, smp, BPF_NOEXIST);
    if (!err)
        ready_post(PT_READY_SAMPLE, tgid, 0, 0);
    else if (err != -17)
        count_drop(PT_DROP_SAMPLES);
}

/* stack_time entries made so far: user space reads the table for its
 * tally of stacks only when it has new ones. */
__u64 stack_entries_made = 0;

/* The entry of stack STACK_ID of slot IDX, made if new. NAMING: the
 * blocker's first stack, whose entry is as good as never there: made
 * without looking first (EEXIST is harmless), one hash lookup less for
 * each new blocker (H2 makes one at most waits). */
static __always_inline void note_stack(__u32 idx, __s32 stack_id, __u64 pid_tgid, bool naming)
{
    struct pt_stack_key k = { .slot = idx, .stack_id = stack_id, .tgid = pid_tgid >> 32 };
    struct pt_stack_val zero = {};
    bool made;

    if (stack_id < 0)
        return;
    /* The slot's own entry first: a blocker's first stack takes it. */
    long err;
    if (slot_own(bpf_map_lookup_elem(&slots, &idx), stack_id, k.tgid, true, &made))
        err = made ? 0 : -17;
    else if (naming || !bpf_map_lookup_elem(&stack_time, &k))
        err = bpf_map_update_elem(&stack_time, &k, &zero, BPF_NOEXIST);
    else
        return;
    if (!err) {
        __sync_fetch_and_add(&stack_entries_made, 1);
        if (!(stack_id & PT_USTACK_ID))    /* kernel-unwound stacks need no copy */
            take_sample(idx, pid_tgid >> 32, (__u32)pid_tgid, stack_id);
    } else if (err != -17)
        count_drop(PT_DROP_STACKAGG);
}

#include "unwind.bpf.h"

#include "budget.bpf.h"

/* Whether kernel-unwound stack SID is gone from the kernel's table: a
 * thread's cache still gives its id (a hit does not refresh the table's
 * LRU), but user space, asked for it on a new blocker, could copy it from
 * nowhere once it had let its own copy go. Looked at only on a cache hit
 * for a slot the stack was not noted for yet (cache_hit). */
static __always_inline bool ustack_gone(__s32 sid)
{
    return (sid & PT_USTACK_ID) && !bpf_map_lookup_elem(&ustacks, &sid);
}

/* Whether cache entry C still gives the stack at IP and SP. For a slot
 * (NOTE_FOR: its index + 1, 0 for none) it was not noted for, its stack
 * must also still be in the kernel's table: a gone one is walked again, so
 * a new blocker's naming stack is never refused for it (a mutex waited on
 * once went unnamed). */
static __always_inline bool cache_hit(const struct pt_stack_cache *c, __u64 ip, __u64 sp, __u32 note_for)
{
    return c->ip == ip && c->sp == sp && ip && ustack_cache_holds(c) &&
           (!note_for || c->noted_slot == note_for || !ustack_gone(c->sid));
}

/* The current thread's user stack id, from the cache when its user ip and
 * sp are those of the last walk: the same instruction at the same stack
 * depth (and, for a kernel-unwound stack, the same return addresses at two
 * depths). rbp is no part of the key: code without frame pointers (libc)
 * leaves anything in it. Kernel-unwound (CFI) stacks first; the kernel's
 * frame-pointer walk for processes without tables. NOTE_FOR: cache_hit. */
static __always_inline __s32 cached_stackid(void *ctx, struct pt_stack_cache *pair, __u32 *mru,
                                            struct pt_regs *regs, struct pt_stack_cache **used, __u32 note_for)
{
    /* REGS is a BTF pointer (or a uprobe's context): plain loads, each
     * BPF_CORE_READ was a helper call on every wait and wakeup. */
    __u64 ip = regs->ip, sp = regs->sp;
    bool second = *mru & 1;
    struct pt_stack_cache *c = second ? &pair[1] : &pair[0], *other = second ? &pair[0] : &pair[1];
    *used = c;
    if (cache_hit(c, ip, sp, note_for))
        return c->sid;
    /* The other path: it becomes the most recent; a walk replaces it. */
    *used = c = other;
    *mru = !second;
    if (cache_hit(c, ip, sp, note_for))
        return c->sid;
    for (int j = 0; j < PT_CACHE_CHECKS; j++)
        c->chk_addr[j] = 0;
    c->early = 0;
    c->cut_gen = 0;
    __s32 sid = cfi_unwind ? unwind_user(ip, sp, regs->bp, c) : UNWIND_BY_FP;
    if (sid == UNWIND_FAILED) {
        count_drop(PT_DROP_STACKS);
        __sync_fetch_and_add(&drop_stacks_table, 1);
        c->ip = 0;
        return -1;
    }
    bool keep = sid != UNWIND_LATER;
    /* The kernel's frame-pointer walk needs the program's context: a
     * stack taken as a long wait ends (end_stacks.bpf.h) has none. */
    if (sid < 0 && !ctx) {
        c->ip = 0;
        return -1;
    }
    if (sid < 0)
        sid = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK | BPF_F_REUSE_STACKID);
    if (sid < 0) {
        count_drop(PT_DROP_STACKS);
        __sync_fetch_and_add(&drop_stacks_fp, 1);
        drop_stacks_fp_err = sid;
        return sid;
    }
    c->ip = keep ? ip : 0;
    c->sp = sp;
    c->sid = sid;
    c->noted_slot = 0;
    return sid;
}

static __always_inline struct pt_regs *user_regs(void)
{
    return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

/* Takes the waiter's user stack, at the end of its thread's gap
 * (stack_skipped), or outside it (NAMING); FIRST: the blocker's first
 * stack (note_stack); only valid while the waiter is current. W is its own
 * record; REGS its user registers as the stack walk sees them. Its own
 * clock read: the wait's came before a new blocker's slot was made, which
 * the budget does not pay for. */
static __always_inline void chain_begin(struct pt_wait *w, __u32 tid, __u32 tgid, __u32 idx, __u64 now);

static __always_inline __s32 waiter_stack(void *ctx, __u32 idx, __u64 pid_tgid, struct pt_wait *w,
                                          struct pt_regs *regs, bool naming, bool first, bool chains)
{
    __u64 start = stack_budget_ns ? bpf_ktime_get_ns() : 0;
    struct pt_budget *b;
    w->odds = budget_sample(&w->wait_gap, start, naming, true, &b);
    if (!w->odds)
        return -1;
    struct pt_stack_cache *c;
    __s32 sid = cached_stackid(ctx, w->wait_st, &w->wait_mru, regs, &c, idx + 1);
    /* Noting the stack for a blocker new to it is the blocker's own
     * bookkeeping, as its slot is: under churn, thousands a second. */
    budget_close(b, start, naming);
    /* A chain is kept where the stack is (within a budget of its own);
     * CHAINS false (a goroutine's wait: no thread holds what it waits on,
     * and a uprobe may not look a thread up by its id) reads none. */
    if (sid >= 0 && chains)
        chain_begin(w, (__u32)pid_tgid, pid_tgid >> 32, idx, start);
    if (sid >= 0 && c->noted_slot != idx + 1) {
        note_stack(idx, sid, pid_tgid, first);
        c->noted_slot = idx + 1;
    }
    return sid;
}

/* Whether wait W on slot S (index IDX) skips its stack (in its thread's
 * gap); *NAMING: its stack names the blocker, as its first waiter's (a
 * thread idle all run long is named too, not only once a wait of it
 * completes), or, outside the gap as well, it is taken so that its waker
 * can name the blocker's (waker_naming_slot, set by wait_finish). Asked
 * before the registers are read, so a wait in the gap costs a decrement. */
static __always_inline bool wait_stack_skipped(struct pt_slot *s, __u32 idx, struct pt_wait *w, __u64 pid_tgid,
                                               bool *naming, bool *for_waker)
{
    /* first_tid first: first_stack is on a line a wait's start need not read */
    *naming = (__u32)pid_tgid == s->first_tid && s->first_stack < 0;
    *for_waker = w->waker_naming_slot == idx + 1;
    if (*for_waker)
        w->waker_naming_slot = 0;
    return !(w->flags & PT_WAIT_TIMED) || stack_skipped(&w->wait_gap, *naming || *for_waker);
}

/* As wait W on slot S (index IDX) begins, in its thread, and not skipped:
 * its stack, outside the gap where NAMING or FOR_WAKER. REGS: its user
 * registers. CHAINS: its wait chain read too (waiter_stack). */
static __always_inline void take_wait_stack(void *ctx, struct pt_slot *s, __u32 idx, struct pt_wait *w,
                                            __u64 pid_tgid, struct pt_regs *regs, bool naming, bool for_waker,
                                            bool chains)
{
    w->stack_id = waiter_stack(ctx, idx, pid_tgid, w, regs, naming || for_waker, naming, chains);
    if (!naming)
        return;
    if (w->stack_id >= 0)
        s->first_stack = w->stack_id;
    else if ((s->key.kind & 0xff) == PT_KIND_FUTEX)
        s->naming_ip = regs->ip;    /* one load: churned mutexes under a spent budget stay named */
}

/* The current thread's stack as the waker of a wait, from its own futex
 * call (note_waker). CUR is the current task, REGS its user registers,
 * *MINE is set to its own record, *USED to the cache entry that gave it. */
static __always_inline __s32 waker_stack(void *ctx, struct task_struct *cur, struct pt_regs *regs,
                                         struct pt_wait **mine, struct pt_stack_cache **used)
{
    *mine = bpf_task_storage_get(&waits, cur, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!*mine)
        return -1;
    return cached_stackid(ctx, (*mine)->wake_st, &(*mine)->wake_mru, regs, used, 0);
}

/* Charges wait W's waker: its stack, and the (waiter, waker) entry that
 * waker_time keeps, with a copy for unwinding the first time the pair is
 * seen. */
static __always_inline void waker_entry(void *ctx, struct task_struct *cur, struct pt_regs *regs,
                                        struct pt_wait *w, __u32 waiter_tgid)
{
    struct pt_wait *mine;
    struct pt_stack_cache *used = NULL;
    __s32 sid = waker_stack(ctx, cur, regs, &mine, &used);
    if (sid < 0)
        return;
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    struct pt_waker_key k = { .slot = w->slot, .stack_id = w->stack_id, .tgid = waiter_tgid,
                              .waker_stack = sid, .waker_tgid = pid_tgid >> 32 };
    /* The same waiter stack on the same blocker as last time: the entry exists. */
    __u32 seen = w->slot + 1;
    if (mine->wake_seen_sid == sid && mine->wake_seen_slot == seen && mine->wake_seen_stack == w->stack_id &&
        mine->wake_seen_tgid == waiter_tgid) {
        w->waker_stack = sid;
        w->waker_tgid = pid_tgid >> 32;
        return;
    }
    bool made;
    struct pt_slot *s = bpf_map_lookup_elem(&slots, &k.slot);
    bool new_pair = !slot_pair(s, k.stack_id, k.tgid, sid, k.waker_tgid, false, &made) &&
                    !bpf_map_lookup_elem(&waker_time, &k);
    if (new_pair && ustack_gone(sid)) {
        /* As for a waiter's stack (ustack_gone): walked again next time. */
        if (used)
            used->ip = 0;
        return;
    }
    mine->wake_seen_slot = seen;
    mine->wake_seen_sid = sid;
    mine->wake_seen_stack = w->stack_id;
    mine->wake_seen_tgid = waiter_tgid;
    if (new_pair) {
        struct pt_waker_val zero = {};
        long err;
        if (slot_pair(s, k.stack_id, k.tgid, sid, k.waker_tgid, true, &made))
            err = made ? 0 : -17;
        else
            err = bpf_map_update_elem(&waker_time, &k, &zero, BPF_NOEXIST);
        if (!err) {
            if (!(sid & PT_USTACK_ID))
                take_sample(w->slot, pid_tgid >> 32, (__u32)pid_tgid, sid);
        } else if (err != -17) {
            count_drop(PT_DROP_STACKAGG);
            return;
        }
    }
    w->waker_stack = sid;
    w->waker_tgid = pid_tgid >> 32;
}

/* Wait W's waker is the current task CUR, at user registers REGS (its
 * futex call's, or a goroutine's goready: go_uprobes.bpf.h). */
static __always_inline void note_waker_at(void *ctx, struct pt_wait *w, __u32 waiter_tgid,
                                          struct task_struct *cur, struct pt_regs *regs)
{
    /* A blocker waited on many times whose waker was never taken gets one
     * as a new blocker gets its first waiter's: outside the gap, refused
     * only once the budget is two seconds in debt, its wait kept whole
     * (charge_wait). HSQLDB's top lock, 2.5 ms waits, went 917 wakeups
     * without one: a long wait's waker was drawn at 1/64 after its start's
     * stack, and then its end's coin. */
    __u32 idx = w->slot;
    struct pt_slot *s = bpf_map_lookup_elem(&slots, &idx);
    bool naming = s && !s->waker_named && s->parks >= PT_WAKER_NAMING_PARKS;
    if (!naming && stack_skipped(&w->wake_gap, false)) {
        __sync_fetch_and_or(&w->flags, PT_WAIT_WAKER_LOST);
        return;
    }
    __u64 start = stack_budget_ns ? bpf_ktime_get_ns() : 0;
    struct pt_budget *b;
    w->waker_odds = budget_sample(&w->wake_gap, start, naming, false, &b);
    if (!w->waker_odds) {
        __sync_fetch_and_or(&w->flags, PT_WAIT_WAKER_LOST);
        return;
    }
    waker_entry(ctx, cur, regs, w, waiter_tgid);
    if (naming && w->waker_stack >= 0) {
        s->waker_named = 1;
        __sync_fetch_and_or(&w->flags, PT_WAIT_WAKER_NAMING);
    }
    budget_close(b, start, naming);
}

/* The thread waking a waiter from its own FUTEX_WAKE (an unlock, a signal,
 * an Unsafe.unpark) is where the contention was caused. Its stack is taken
 * for waiters whose own stack was, one in 1/odds over the budget of the
 * waker's CPU (the waiter's wake_gap); the waits whose waker's stack was
 * left out count on their waiter's own line. */
static __always_inline void note_waker(void *ctx, struct pt_wait *w, __u32 waiter_tgid)
{
    /* A waiter without a stack is charged nowhere (charge_wait): its
     * waker's stack would serve nothing. */
    if (w->stack_id < 0 || !(w->flags & PT_WAIT_TIMED))
        return;
    struct task_struct *cur = bpf_get_current_task_btf();
    if (cur->flags & PF_KTHREAD)
        return;
    /* Only a wake from the waker's own futex call (not from the kernel, a
     * timer or a signal) has a waker's stack, and only those count down
     * the gap. */
    struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);
    if (regs->orig_ax != NR_FUTEX)
        return;
    note_waker_at(ctx, w, waiter_tgid, cur, regs);
}

#endif
