/* User stacks: stack ids (kernel-unwound by unwind.bpf.h, or the kernel's
 * frame-pointer walk), each thread's stack cache, copies of stacks for
 * unwinding in user space, and the waker's stack at a wake-up. Included by
 * parktrace.bpf.c after slots.bpf.h and jvm.bpf.h.
 *
 * Owns: the maps stacks (frame-pointer stack ids), samples and
 * sample_scratch (stack copies), sample_ready (the ring that wakes user
 * space); take_sample, note_stack, cached_stackid, waiter_stack, user_regs,
 * note_waker. Includes unwind.bpf.h (unwind_bins, unwind_procs, unwind_asked,
 * ustacks, ustack_scratch).
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

/* Wakes user space to name class KLASS of JVM TGID now (note_klass). */
static __always_inline void ask_klass_name(__u32 tgid, __u64 klass)
{
    if (klass) {
        struct pt_ready ev = { .what = PT_READY_KLASS, .tgid = tgid, .klass = klass };
        bpf_ringbuf_output(&sample_ready, &ev, sizeof(ev), 0);
    }
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
    if (!err) {
        struct pt_ready ev = { .what = PT_READY_SAMPLE, .tgid = tgid };
        bpf_ringbuf_output(&sample_ready, &ev, sizeof(ev), 0);
    }
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

    if (stack_id < 0 || (!naming && bpf_map_lookup_elem(&stack_time, &k)))
        return;
    long err = bpf_map_update_elem(&stack_time, &k, &zero, BPF_NOEXIST);
    if (!err) {
        __sync_fetch_and_add(&stack_entries_made, 1);
        if (!(stack_id & PT_USTACK_ID))    /* kernel-unwound stacks need no copy */
            take_sample(idx, pid_tgid >> 32, (__u32)pid_tgid, stack_id);
    } else if (err != -17)
        count_drop(PT_DROP_STACKAGG);
}

#include "unwind.bpf.h"

/* The stacks' budget, per CPU (stack_budget_ns a second; 0: none,
 * --stacks all): ns of stack work (cache checks, walks, the waker entries)
 * this CPU may still spend, refilled as time passes and saved up to a
 * second's worth. While more than half of that is left every wait's stack
 * is taken; below that, one wait in 1/odds, with odds that fall with what
 * is left, down to 1/64; none once the budget is a second's worth in debt.
 * No workload can drive the stacks' cost above the budget for longer than
 * a second.
 *
 * Which waits: each thread counts down a gap drawn at random when it last
 * took a stack (budget_sample), geometric with odds 1/m (geometric_gap), so
 * each wait takes its stack with odds 1/m whatever came before it, and no
 * call path is favoured by a regular rhythm; the stack taken stands for m
 * waits (charge_wait).
 * A wait in the gap costs one decrement: the clock, the budget and the
 * stack are read only for the waits taken. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct pt_budget);
} stack_budget SEC(".maps");


/* The most significant bit of V (V > 0). */
static __always_inline __u32 msb32(__u32 v)
{
    __u32 r = 0, s;     /* branch-free (above, slots.bpf.h) */
    s = above(v, 0xFFFF) << 4; v >>= s; r |= s;
    s = above(v, 0xFF) << 3; v >>= s; r |= s;
    s = above(v, 0xF) << 2; v >>= s; r |= s;
    s = above(v, 0x3) << 1; v >>= s; r |= s;
    return r | (v >> 1);
}

/* A geometric number of waits to skip before the next that takes its
 * stack, one in M (1 .. PT_GAP_MAX_M): floor(ln U / ln(1 - 1/M)) for a
 * uniform U, from the loader's tables. Geometric, so memoryless: whatever
 * the waits since the last stack, the next takes its stack with odds 1/M,
 * so its weight M is right for it whatever its call path, even when the
 * budget (and so M) changes with the stacks taken. A uniform gap was not:
 * its odds rise along the gap, and the paths a thread's rhythm puts late in
 * gaps weighed too little. */
static __always_inline __u32 geometric_gap(__u32 m)
{
    if (m <= 1)
        return 0;
    if (m > PT_GAP_MAX_M)
        m = PT_GAP_MAX_M;
    __u32 u = bpf_get_prandom_u32() | 1;
    __u32 top = msb32(u);
    __u32 frac = top >= 8 ? u >> (top - 8) : u << (8 - top);
    asm volatile("" : "+r"(frac));      /* masked here, where the verifier sees it */
    frac &= PT_GAP_FRAC - 1;
    /* -ln(u / 2^32) = ln 2 * (32 - log2 u), Q16 */
    __u64 e = (((32ull - top) << 16) - gap_log2_frac[frac]) * 45426 >> 16;
    /* -1 / ln(1 - 1/m), Q16: past the table, m - 1/2 to within 1e-5 */
    __u64 scale = ((__u64)m << 16) - (1u << 15);
    if (m < PT_GAP_SCALES) {
        __u32 i = m;
        asm volatile("" : "+r"(i));     /* masked here, where the verifier sees it */
        scale = gap_scale[i & (PT_GAP_SCALES - 1)];
    }
    __u64 g = e * scale >> 32;
    return g < 64ull * m ? (__u32)g : 64 * m;
}

/* The bucket saves up to a second's budget, and goes as far into debt
 * (a second more for naming stacks). It starts full, lent (budget_at).
 * Saving an eighth of a second let a JVM's start-up walks put every
 * thread's gap at the floor's odds, and a thread that then waited a few
 * dozen times took no stack (nor its waker's) all run long. */
#define PT_BUDGET_SAVED(ns) ((__s64)(ns))

/* What a stack taken costs beyond its timed part, charged as a constant
 * (timing it all would cost every sampled wait more clock reads): the
 * clock reads and the budget's own work around it, the end of its wait
 * charging its entry (a hash lookup, atomics, two weighings), and the
 * caches a 2 KiB stack check leaves cold. Measured on the Java ThreadPool:
 * charged 150 ns, stacks cost 84 ns a run against a 39 ns budget; charged
 * 1.5 us, 33 (bpf_stats, against no stacks at all). */
#define PT_STACK_AFTER_NS 1500

/* This CPU's budget refilled to NOW (NULL: no budget, --stacks all). */
static __always_inline struct pt_budget *budget_at(__u64 now)
{
    __u32 zero = 0;
    struct pt_budget *b = stack_budget_ns ? bpf_map_lookup_elem(&stack_budget, &zero) : NULL;
    if (!b)
        return NULL;
    __s64 cap = PT_BUDGET_SAVED(stack_budget_ns);
    if (!b->last) {
        /* Full at the start, so that a JVM's start-up walks leave its
         * threads' gaps at full odds; but lent: half of the refill pays it
         * back, so the stacks' time over a run of a few seconds or more is
         * within the budget (H2 spent 0.55% of a CPU in 10 s at 0.5%). */
        b->left = b->lent = cap;
        b->last = now;
        return b;
    }
    __u64 dt = now - b->last;
    dt = dt < 4000000000ull ? dt : 4000000000ull;   /* from two seconds' debt to full, and more */
    __s64 add = (__s64)(dt * stack_budget_ns / 1000000000ull), repay = add / 2;
    repay = repay < b->lent ? repay : b->lent;
    b->lent -= repay;
    __s64 left = b->left + add - repay;
    b->left = left < cap ? left : cap;
    b->last = now;
    /* The floor follows the debt: raised while the stacks at the floor's
     * odds outrun the refill (the bucket half a second's worth in debt: a
     * start-up's burst takes it below zero, and weights raised then moved
     * a Java two-path lock's shares 15 points), at most every 50 ms,
     * and lowered back once half of it is saved again, at most every
     * second. A load that never outruns 1/64 keeps it, and its weights. */
    __u32 fm = b->floor_m ? b->floor_m : PT_GAP_FLOOR_M;
    __u64 since = now - b->floor_at;
    if (b->left <= -(cap >> 1) && fm < PT_GAP_MAX_M && since >= 50000000ull) {
        b->floor_m = fm * 2;
        b->floor_at = now;
    } else if (b->left >= cap >> 1 && fm > PT_GAP_FLOOR_M && since >= 1000000000ull) {
        b->floor_m = fm / 2;
        b->floor_at = now;
    }
    return b;
}

static __always_inline bool budget_spent(const struct pt_budget *b)
{
    return b && b->left <= -PT_BUDGET_SAVED(stack_budget_ns);
}

/* Whether B is too deep in debt for even a naming stack: a second more
 * than budget_spent. At the same line, a load whose floor walks outran the
 * refill (HSQLDB: 60 000 waits a second) held the bucket there, and a
 * thousand new blockers' naming stacks were refused in 8 s, a JVM's idle
 * service threads among them, ranked as contention with no stack. (Gap
 * walks stopped at an empty bucket instead left the naming stacks that
 * second, but then odds 0 came often under any binding budget, and
 * which waits met them leaned on what the CPU had just walked: a Java
 * two-path lock's shares moved 7 points at 0.1%.) */
static __always_inline bool naming_spent(const struct pt_budget *b)
{
    return b && b->left <= -2 * PT_BUDGET_SAVED(stack_budget_ns);
}

/* The odds a stack is taken with at budget B: certain while more than half
 * of what it saves is left, falling with what is left below that down to
 * the CPU's floor (budget_at), 0 once it is spent. */
static __always_inline __u32 budget_floor(const struct pt_budget *b)
{
    __u32 fm = b->floor_m > PT_GAP_FLOOR_M ? b->floor_m : PT_GAP_FLOOR_M;
    return PT_ODDS_ONE / (fm < PT_GAP_MAX_M ? fm : PT_GAP_MAX_M);
}

static __always_inline __u32 budget_odds(const struct pt_budget *b)
{
    __s64 half = PT_BUDGET_SAVED(stack_budget_ns) >> 1, left = b->left;
    if (budget_spent(b))
        return 0;
    if (left >= half)
        return PT_ODDS_ONE;
    __u32 floor = budget_floor(b);
    __u32 p = left > 0 ? ((__u64)left << 24) / (__u64)half : 0;
    return p > floor ? p : floor;
}

/* Whether this wait skips a stack: inside gap G (a blocker's first stack,
 * NAMING, names it and is always taken). */
static __always_inline bool stack_skipped(struct pt_gap *g, bool naming)
{
    if (!stack_budget_ns || naming || !g->left)
        return false;
    g->left--;
    return true;
}

/* A stack is taken at the end of gap G (or NAMING its blocker) at NOW on
 * this CPU: the odds it stands for (0: left out, the budget spent), and G
 * drawn again. The gap's waits are counted: left out, and for a waiter's
 * gap (WAITER) charged nowhere but through this stack's weight. *BP: the
 * budget, for budget_close. */
static __always_inline __u32 budget_sample(struct pt_gap *g, __u64 now, bool naming, bool waiter,
                                           struct pt_budget **bp)
{
    struct pt_budget *b = budget_at(now);
    *bp = b;
    if (!b)
        return PT_ODDS_ONE;
    /* A naming stack is refused only once the budget is two seconds in debt:
     * taken even then, the stacks' cost would follow the rate of new
     * blockers. A futex's class is then read off its waiter's ip
     * (take_wait_stack). */
    if (naming) {
        if (!naming_spent(b))
            return PT_ODDS_ONE;
        HOT_ADD(naming_refused, 1);
        return 0;
    }
    if (g->drawn) {
        struct pt_hot_counts *h = hot();
        if (h) {
            __sync_fetch_and_add(&h->stack_budget_skips, g->drawn);
            if (waiter)
                __sync_fetch_and_add(&h->stack_samples_lost, g->drawn);
        }
    }
    __u32 odds = g->odds ? g->odds : PT_ODDS_ONE;
    __u32 next = budget_odds(b);
    if (!next) {
        odds = 0;
        next = budget_floor(b);
    }
    /* One wait in m exactly: the weight is the odds the gap really has. */
    __u32 m = next >= PT_ODDS_ONE ? 1 : PT_ODDS_ONE / next;
    m = m < PT_GAP_MAX_M ? m : PT_GAP_MAX_M;
    g->odds = PT_ODDS_ONE / m;
    g->drawn = geometric_gap(m);
    g->left = g->drawn;
    return odds;
}

/* COST ns of stack work, off B: what is left, and what was spent. */
static __always_inline void budget_charge(struct pt_budget *b, __u64 cost)
{
    b->left -= (__s64)cost;
    b->spent += cost;
}

/* Stack work begun at START is done: its cost, off the budget. A new
 * blocker's naming stack (NAMING) is charged its timed part only: under
 * churn, the 1.5 us more at each of 12 000 new mutexes a second spent the
 * bucket, and half of them went unnamed (no class). */
static __always_inline void budget_close(struct pt_budget *b, __u64 start, bool naming)
{
    if (b)
        budget_charge(b, bpf_ktime_get_ns() - start + (naming ? 0 : PT_STACK_AFTER_NS));
}

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
static __always_inline __s32 waiter_stack(void *ctx, __u32 idx, __u64 pid_tgid, struct pt_wait *w,
                                          struct pt_regs *regs, bool naming, bool first)
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
 * registers. */
static __always_inline void take_wait_stack(void *ctx, struct pt_slot *s, __u32 idx, struct pt_wait *w,
                                            __u64 pid_tgid, struct pt_regs *regs, bool naming, bool for_waker)
{
    w->stack_id = waiter_stack(ctx, idx, pid_tgid, w, regs, naming || for_waker, naming);
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
    bool new_pair = !bpf_map_lookup_elem(&waker_time, &k);
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
        long err = bpf_map_update_elem(&waker_time, &k, &zero, BPF_NOEXIST);
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

#endif
