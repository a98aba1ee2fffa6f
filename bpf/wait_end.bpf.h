/* The end of a wait: its time charged to its stacks, each weighed by the
 * odds it was taken with (charge_stack, weigh, charge_wait), and the
 * blocker's counts closed (wait_finish, end_stale_wait). Included by
 * parktrace.bpf.c right after slots.bpf.h, whose tables and wait records
 * it writes.
 *
 * Owns: charge_stack, weigh, count_random_walk, charge_wait, wait_finish,
 * end_stale_wait.
 *
 * Shared: slots, stack_time, waker_time and hot_counts with slots.bpf.h;
 * the long waits' end stacks with end_stacks.bpf.h (end_stack_ask,
 * declared here); each thread's waker_naming_slot with stacks.bpf.h. */
#ifndef PT_WAIT_END_BPF_H
#define PT_WAIT_END_BPF_H

/* Charges a wait to its waiter stack's entry in stack_time, or, with a
 * known waker (WAKER >= 0), to their (waiter stack, waker stack) entry in
 * waker_time; user space adds those to the waiter stack's own line, which
 * keeps the rest. V: the waits and ns it stands for, on its waiter's line
 * (line_*) and for the pair. A waiter stack's entry was made when the stack was taken
 * (note_stack); a waker entry is made here the first time when its waker
 * did not make it (--probes uprobes, samples). */
static __always_inline bool charge_stack(__u32 slot, __s32 stack_id, __u32 tgid, __s32 waker,
                                         __u32 waker_tgid, const struct pt_waker_val *v)
{
    struct pt_slot *s = bpf_map_lookup_elem(&slots, &slot);
    bool made;
    if (waker >= 0) {
        struct pt_waker_key wk = { .slot = slot, .stack_id = stack_id, .tgid = tgid,
                                   .waker_stack = waker, .waker_tgid = waker_tgid };
        struct pt_waker_val *pv = slot_pair(s, stack_id, tgid, waker, waker_tgid, true, &made);
        if (!pv)
            pv = bpf_map_lookup_elem(&waker_time, &wk);
        if (!pv) {
            struct pt_waker_val zero = {};
            if (bpf_map_update_elem(&waker_time, &wk, &zero, BPF_NOEXIST) == 0)
                pv = bpf_map_lookup_elem(&waker_time, &wk);
            else
                count_drop(PT_DROP_STACKAGG);
        }
        if (pv) {
            __sync_fetch_and_add(&pv->count, v->count);
            __sync_fetch_and_add(&pv->ns, v->ns);
            __sync_fetch_and_add(&pv->line_count, v->line_count);
            __sync_fetch_and_add(&pv->line_ns, v->line_ns);
            return true;
        }
        /* No waker entry could be made (counted): the waiter's own line. */
    }
    struct pt_stack_val *sv = stack_val_at(s, slot, stack_id, tgid);
    if (!sv)
        return false;
    __sync_fetch_and_add(&sv->count, v->line_count);
    __sync_fetch_and_add(&sv->ns, v->line_ns);
    return true;
}

/* D ns taken with ODDS (2^-24ths, below PT_ODDS_ONE) stand for 2^24 / ODDS
 * waits and their time, the count rounded up or down at random in
 * proportion so that it stays unbiased. */
static __always_inline void weigh(__u64 odds, __u64 d, __u64 *count, __u64 *ns)
{
    if (odds >= PT_ODDS_ONE) {
        *count = 1;
        *ns = d;
        return;
    }
    if (!odds)
        odds = 1;
    *count = (PT_ODDS_ONE + bpf_get_prandom_u32() % odds) / odds;
    *ns = d < (1ull << 39) ? (d << 24) / odds : (d / odds) << 24;
}

/* A stack taken at odds below one has been charged NS (weighed) to its
 * lines: stack_samples and stack_time_sampled_pct count it, whether
 * charge_wait or a long wait's end stack (end_stack_run) charged it. */
static __always_inline void count_random_walk(struct pt_hot_counts *h, __u64 ns)
{
    if (h) {
        __u64 us = ns >> 10;
        us = us < (1ull << 22) ? us : (1ull << 22);
        __sync_fetch_and_add(&h->stack_samples, 1);
        __sync_fetch_and_add(&h->stack_sampled_ns, ns);
        __sync_fetch_and_add(&h->stack_sampled_sq, us * us);
    }
}

/* Charges wait W of D ns to its stacks, each weighed by the odds it was
 * taken with (over the budget, one wait in 1/odds takes its stack): its
 * waiter's line by the waiter stack's odds, its (waiter, waker) pair by
 * both. A wait whose own stack was left out is charged nowhere (those in
 * a thread's gap are counted lost when the gap ends, budget_sample); one
 * whose waker's stack was left out counts on its waiter's own line. User space
 * scales a blocker's stacks to its exact totals (stack_weights.c). */
static __always_inline __u32 long_wait_odds(void);
static __always_inline bool end_stack_ask(struct task_struct *waiter, const struct pt_wait_end *w, __u32 tgid,
                                          __u64 d, __u32 odds);

/* Long waits (PT_LONG_WAIT_NS and more) are a stratum of their own: each is
 * kept or left out by a coin of its own as it ends, with odds in proportion
 * to its length (the budget's odds then, long_wait_odds, per
 * PT_LONG_WAIT_NS), whether its start took its stack or not; one kept
 * whose stack was left out at its start has it taken as it ends
 * (end_stacks.bpf.h). The stratum depends on the wait's length alone and
 * each coin's odds on that length and the budget before it is thrown, so
 * both strata stay unbiased; and a long wait is no longer weighed by its
 * start's odds (a nonfair lock's 400 ms starvation weighed 64 times moved
 * issue 16's Java two-path lock by 20 points). */
static __always_inline void charge_wait(const struct pt_wait_end *w, __s32 waker, __u32 tgid, __u64 d,
                                        struct task_struct *waiter)
{
    __u32 odds = w->odds, pair = w->odds;    /* the waiter line's, and before the waker's own */
    if (waiter && stack_budget_ns && d >= PT_LONG_WAIT_NS && (w->flags & PT_WAIT_WAKER_NAMING)) {
        /* Its waker names the blocker's: kept for certain at weight one, in
         * place of the long wait's coin below (odds p, weight 1/p: one wait
         * either way, so no stratum moves). Its waker stack's entry is then
         * never left at zero waits. Where no coin is thrown, its start's
         * odds weigh it as any other. */
        odds = pair = PT_ODDS_ONE;
    } else if (waiter && stack_budget_ns && d >= PT_LONG_WAIT_NS) {
        /* In proportion to its length (the budget's odds at PT_LONG_WAIT_NS):
         * a wait's weight d / p is then at most PT_LONG_WAIT_NS / odds
         * (64 ms at the floor), however long the wait. */
        __u64 q = (__u64)long_wait_odds() * (d >> 10) / (PT_LONG_WAIT_NS >> 10);
        __u32 p = q < PT_ODDS_ONE ? (__u32)q : PT_ODDS_ONE;
        if (p && (p >= PT_ODDS_ONE || bpf_get_prandom_u32() % PT_ODDS_ONE < p)) {
            if (w->stack_id < 0) {
                if (!end_stack_ask(waiter, w, tgid, d, p) && !w->odds)
                    HOT_ADD(stack_samples_lost, 1);
                return;
            }
            odds = p;
            pair = (__u64)w->odds * p >> 24;
        } else if (p) {
            /* Left out by its own coin: charged nowhere, as one over the budget. */
            if (w->stack_id >= 0 || !w->odds)
                HOT_ADD(stack_samples_lost, 1);
            return;
        }
        /* p == 0 (the budget spent): as its start decided. */
    }
    if (!odds) {
        HOT_ADD(stack_samples_lost, 1);
        return;
    }
    /* No stack (none could be taken): charged nowhere. A waker entry for
     * waiter stack -1 printed the waker's frames as a waiter's line. */
    if (w->stack_id < 0)
        return;
    if (w->flags & PT_WAIT_WAKER_LOST)
        waker = -1;
    struct pt_waker_val v;
    weigh(odds, d, &v.line_count, &v.line_ns);
    if (waker >= 0 && (w->waker_odds < PT_ODDS_ONE || pair != odds))
        weigh((__u64)pair * w->waker_odds >> 24, d, &v.count, &v.ns);
    else {
        v.count = v.line_count;
        v.ns = v.line_ns;
    }
    if (charge_stack(w->slot, w->stack_id, tgid, waker, w->waker_tgid, &v) &&
        (odds < PT_ODDS_ONE || (waker >= 0 && w->waker_odds < PT_ODDS_ONE)))
        count_random_walk(hot(), v.line_ns);
}

/* A wait that slept has ended: everything but the live part is done here.
 * W is the wait (a copy: the live record may already be reused), LIVE the
 * thread's record. WAITER: the waiting task, as it is switched back in,
 * still inside its wait (a long wait's stack can be taken as it leaves the
 * kernel); NULL elsewhere. */
static __always_inline void wait_finish(struct pt_slot *s, const struct pt_wait_end *w, struct pt_wait *live,
                                        __u64 now, __u32 end, __u32 tid, __u32 tgid, struct task_struct *waiter)
{
    note_events(s, w->start_ns, now);
    __sync_fetch_and_add(&s->parks, 1);
    if (!(w->flags & PT_WAIT_TIMED))
        return;
    __u64 d = now - w->start_ns;
    __sync_fetch_and_add(&s->ends[end < PT_END_COUNT ? end : PT_END_INTERRUPTED], 1);
    __sync_fetch_and_add(&s->thread_ns, d);
    raise_max(&s->max_ns, d);
    raise_max(&s->max_win_ns, d);
    raise_max(&s->peak, w->concurrency);
    raise_max(&s->peak_win, w->concurrency);
    __sync_fetch_and_add(&s->hist[log2_slot(d)], 1);
    leave_wait(s, w->start_ns, w->flags, now, false, w->resume_ns);

    if (w->stack_id >= 0 && s->first_stack < 0 && tid == s->first_tid)
        s->first_stack = w->stack_id;
    __u64 t0 = part_clock();
    note_thread(s, w->slot, tid, w->start_ns, live);
    part_done(PT_PART_END_THREADS, t0);
    __s32 waker = end == PT_END_WOKEN ? w->waker_stack : -1;
    t0 = part_clock();
    charge_wait(w, waker, tgid, d, end == PT_END_INTERRUPTED ? NULL : waiter);
    part_done(PT_PART_END_CHARGE, t0);
    /* Its waker is due to name the blocker's (note_waker), but a waiter
     * without a stack has no waker taken: under a tight budget, waits that
     * take their start's stack at 1/64 left a condition waited on 150
     * times unnamed one run in eight. So the thread's next wait here takes
     * its stack outside the gap (at weight one, as a naming stack), one
     * wait in PT_WAKER_NAMING_PARKS: a blocker no futex call wakes walks
     * no more than that. */
    if (stack_budget_ns && w->stack_id < 0 && end == PT_END_WOKEN && live && !s->waker_named &&
        s->parks >= PT_WAKER_NAMING_PARKS && !(s->parks & (PT_WAKER_NAMING_PARKS - 1)))
        live->waker_naming_slot = w->slot + 1;
}

/* A record still active when its thread sleeps again, or exits, lost the
 * switch back in that ends it: on 6.18 a sched_switch now and then never
 * reaches the program (about one wait in 8 000 on a contended mutex, seen
 * as a thread switched out twice with no switch in between). Called at
 * any interruptible sleep of the thread (sched_switch), not only its next
 * wait: a holder sleeping on its lock would count as parked on it. The
 * thread has run without a break since that switch (a preemption's switch
 * back in would have ended it), so its wait ended the CPU time it has run
 * since it was last picked before NOW. Where that cannot be told (a uprobe
 * park; a thread that has run longer than it waited), reclaim_stale drops
 * it. */
static __always_inline void end_stale_wait(struct pt_wait *w, struct task_struct *t, __u64 now)
{
    __u32 flags = w->flags;
    if (!(flags & PT_WAIT_ACTIVE))
        return;
    __u64 ran = t->se.sum_exec_runtime - t->se.prev_sum_exec_runtime;
    struct pt_slot *s = bpf_map_lookup_elem(&slots, &w->slot);
    if ((flags & PT_WAIT_UPROBE) || ran >= now - w->start_ns || !s) {
        reclaim_stale(w, now);
        return;
    }
    /* Not before the window user space last opened: its snapshot then
     * counted the wait as under way up to that moment, and an end before
     * it took time back from a closed window (the next one's thread time
     * below its real time). */
    __u64 end = now - ran, opened = window_start_ns;
    if (end < opened && opened <= now)
        end = opened;
    struct pt_wait_end done;
    wait_end_copy(&done, w);
    done.resume_ns = now;
    wait_finish(s, &done, w, end, done.end, t->pid, t->tgid, NULL);
    __sync_fetch_and_add(&lost_ends_recovered, 1);
}

#endif
