/* The stacks' budget: each CPU's bucket of nanoseconds of stack work, the
 * odds a stack is taken with, and the geometric gaps between the waits that
 * take one. Included by stacks.bpf.h, after unwind.bpf.h.
 *
 * Owns: the map stack_budget; msb32, geometric_gap, floor_m_of, budget_at,
 * budget_spent, naming_spent, budget_floor, budget_odds, stack_skipped,
 * budget_sample, budget_charge, budget_close.
 *
 * Shared: hot_counts (slots.bpf.h); end_stacks.bpf.h reads the odds
 * (long_wait_odds). */
#ifndef PT_BUDGET_BPF_H
#define PT_BUDGET_BPF_H

/* The stacks' budget, per CPU (stack_budget_ns a second; 0: none,
 * --stacks all): ns of stack work (cache checks, walks, the waker entries)
 * this CPU may still spend, refilled as time passes and saved up to a
 * second's worth. While more than half of that is left every wait's stack
 * is taken; below that, one wait in 1/odds, with odds that fall with what
 * is left, down to the CPU's floor (1/64, lower while it is in debt: see
 * budget_at); none once the budget is a second's worth in debt.
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

/* The wait chains' budget (chains.bpf.h): as much again, apart, so that
 * reading chains never leaves a stack out. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct pt_budget);
} chain_budget SEC(".maps");


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

/* The floor of B's odds is 1 / this (floor_m, 0 until first raised). */
static __always_inline __u32 floor_m_of(const struct pt_budget *b)
{
    return b->floor_m > PT_GAP_FLOOR_M ? b->floor_m : PT_GAP_FLOOR_M;
}

/* This CPU's budget in MAP (stack_budget, chain_budget) refilled to NOW
 * (NULL: no budget, --stacks all). */
static __always_inline struct pt_budget *budget_of(void *map, __u64 now)
{
    __u32 zero = 0;
    struct pt_budget *b = stack_budget_ns ? bpf_map_lookup_elem(map, &zero) : NULL;
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
    /* A NOW read before the last refill (earlier in the same program run)
     * adds nothing: as an unsigned difference it was a refill to full. */
    __u64 dt = now > b->last ? now - b->last : 0;
    dt = dt < 4000000000ull ? dt : 4000000000ull;   /* from two seconds' debt to full, and more */
    __s64 add = (__s64)(dt * stack_budget_ns / 1000000000ull), repay = add / 2;
    repay = repay < b->lent ? repay : b->lent;
    b->lent -= repay;
    __s64 left = b->left + add - repay;
    b->left = left < cap ? left : cap;
    if (now > b->last)
        b->last = now;
    /* The floor follows the debt: raised while the stacks at the floor's
     * odds outrun the refill (the bucket half a second's worth in debt: a
     * start-up's burst takes it below zero, and weights raised then moved
     * a Java two-path lock's shares 15 points), at most every 50 ms,
     * and lowered back once half of it is saved again, at most every
     * second. A load that never outruns 1/64 keeps it, and its weights. */
    __u32 fm = floor_m_of(b);
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

/* This CPU's stack budget refilled to NOW (NULL: --stacks all). */
static __always_inline struct pt_budget *budget_at(__u64 now)
{
    return budget_of(&stack_budget, now);
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

/* The lowest odds B gives, its floor as odds. */
static __always_inline __u32 budget_floor(const struct pt_budget *b)
{
    __u32 fm = floor_m_of(b);
    return PT_ODDS_ONE / (fm < PT_GAP_MAX_M ? fm : PT_GAP_MAX_M);
}

/* The odds a stack is taken with at budget B: certain while more than half
 * of what it saves is left, falling with what is left below that down to
 * the CPU's floor (budget_at), 0 once it is spent. */
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

/* The most one piece of stack or chain work is charged. Timed from the
 * clock, it holds whatever the CPU did meanwhile: a vCPU its host took
 * away mid-walk charged milliseconds, a second's saved budget at once,
 * and a CI run's worker kept 2 of its 12 chains (chains_unread). No walk
 * or chain reading of ours comes near it (a deep Java walk: ~12 us). */
#define PT_CHARGE_MAX_NS 200000

/* COST ns of stack work, off B: what is left, and what was spent. */
static __always_inline void budget_charge(struct pt_budget *b, __u64 cost)
{
    cost = cost < PT_CHARGE_MAX_NS ? cost : PT_CHARGE_MAX_NS;
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

#endif
