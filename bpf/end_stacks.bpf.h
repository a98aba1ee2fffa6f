/* Stacks of long waits, taken as they end (issue 16). Included by
 * parktrace.bpf.c after stacks.bpf.h.
 *
 * A wait's stack is taken at its start, one wait in m over the budget, and
 * stands for m waits. Wait times can be heavy-tailed (a nonfair lock starves
 * one waiter for 400 ms while its others wait 0.6 ms): one such wait weighed
 * 64 times decided a lock's path shares. So a wait of PT_LONG_WAIT_NS or
 * more is kept or left out as it ends, by a coin with the odds the budget
 * gives then (charge_wait, wait_end.bpf.h: while the budget is healthy, every
 * one, at its own weight), and if its stack was left out at its start, the
 * stack is taken as it ends: the waiter is still inside its futex call when it is switched back
 * in, so the user stack it will return to is its wait's. The switch runs in
 * another task's context, so a task work (6.18's
 * bpf_task_work_schedule_resume) walks it as the waiter leaves the kernel.
 *
 * Owns: the map end_work (tid -> the wait to charge), end_stack_ask,
 * end_stack_run, long_wait_odds. */
#ifndef PT_END_STACKS_BPF_H
#define PT_END_STACKS_BPF_H

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw, void *map__map,
                                              int (*callback)(struct bpf_map *map, void *key, void *value),
                                              void *aux__prog) __ksym __weak;

struct pt_end_work {
    struct bpf_task_work tw;
    __u64 ns;        /* the wait's length; 0: none pending */
    __u32 slot, tgid;
    __u32 odds;      /* it was kept with (long_wait_odds) */
};

/* One pending wait per thread at most: it leaves the kernel before it can
 * wait again. LRU: exited threads' entries go first. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, struct pt_end_work);
} end_work SEC(".maps");

/* What asking costs beyond the walk, charged to the budget: the element,
 * the kernel's allocation and its task work (not timed: a clock read more
 * at every long wait). */
#define PT_END_ASK_NS 1500

/* The odds a long wait ending on this CPU is kept with (budget_odds); 0
 * when the kernel cannot take a stack at a wait's end at all, and the
 * wait is charged as its start decided. */
static __always_inline __u32 long_wait_odds(void)
{
    if (!bpf_task_work_schedule_resume_impl)
        return 0;
    struct pt_budget *b = budget_at(bpf_ktime_get_ns());
    return b ? budget_odds(b) : 0;
}

/* Takes the user stack of the task leaving the kernel and charges it the
 * wait in VALUE: runs in the waiter's own context, as a task work. */
static int end_stack_run(struct bpf_map *map, void *key, void *value)
{
    struct pt_end_work *e = value;
    __u64 t0 = bpf_ktime_get_ns(), ns = e->ns;
    struct task_struct *cur = bpf_get_current_task_btf();
    e->ns = 0;
    if (!ns || cur->pid != *(__u32 *)key) {
        HOT_ADD(end_stacks_lost, 1);
        return 0;
    }
    struct pt_wait *w = bpf_task_storage_get(&waits, cur, 0, 0);
    struct pt_stack_cache *c;
    __u32 slot = e->slot;
    __s32 sid = w ? cached_stackid(NULL, w->wait_st, &w->wait_mru, (struct pt_regs *)bpf_task_pt_regs(cur), &c,
                                   slot + 1) : -1;
    if (sid >= 0) {
        note_stack(slot, sid, ((__u64)cur->tgid << 32) | cur->pid, false);
        struct pt_stack_val *sv = stack_val_at(bpf_map_lookup_elem(&slots, &slot), slot, sid, e->tgid);
        if (sv) {
            __u64 count, weighed;
            weigh(e->odds, ns, &count, &weighed);
            __sync_fetch_and_add(&sv->count, count);
            __sync_fetch_and_add(&sv->ns, weighed);
            struct pt_hot_counts *h = hot();
            if (h)
                __sync_fetch_and_add(&h->end_stacks, 1);
            /* A random walk too, or the sampled share of the stack time
             * reads a tenth of itself. */
            if (e->odds < PT_ODDS_ONE)
                count_random_walk(h, weighed);
        } else {
            HOT_ADD(end_stacks_lost, 1);
        }
    } else {
        HOT_ADD(end_stacks_lost, 1);
    }
    __u64 now = bpf_ktime_get_ns();
    struct pt_budget *b = budget_at(now);
    if (b)
        budget_charge(b, now - t0);
    return 0;
}

/* Asks for the stack of long wait W (D ns) of WAITER, kept with ODDS but
 * left out at its start, to be taken as it leaves the kernel; false when
 * it cannot be (counted in end_stacks_lost: the wait is charged nowhere). */
static __always_inline bool end_stack_ask(struct task_struct *waiter, const struct pt_wait_end *w, __u32 tgid,
                                          __u64 d, __u32 odds)
{
    __u32 tid = waiter->pid;
    struct pt_end_work *e = bpf_map_lookup_elem(&end_work, &tid);
    if (!e) {
        struct pt_end_work zero = {};
        bpf_map_update_elem(&end_work, &tid, &zero, BPF_NOEXIST);
        e = bpf_map_lookup_elem(&end_work, &tid);
        if (!e)
            return false;
    }
    if (e->ns)
        return false;
    e->ns = d;
    e->slot = w->slot;
    e->tgid = tgid;
    e->odds = odds;
    if (bpf_task_work_schedule_resume_impl(waiter, &e->tw, &end_work, end_stack_run, NULL)) {
        e->ns = 0;
        HOT_ADD(end_stacks_lost, 1);
        return false;
    }
    struct pt_budget *b = budget_at(bpf_ktime_get_ns());
    if (b)
        budget_charge(b, PT_END_ASK_NS);
    return true;
}

#endif
