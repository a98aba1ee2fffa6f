/* Probe mode "sched" (default): futex waits, and Java parks, monitor entries
 * and Object.wait, timed from the scheduler (tp_btf sched_switch,
 * sched_waking, hrtimer_expire_entry/exit). Included by parktrace.bpf.c after
 * slots, futex, jvm and stacks.
 *
 * Owns: the maps timer_wakes and quiet_waits, and hrtimer_wakeup_fn; sleeping_in_futex, note_quiet; the programs hrtimer_entry,
 * hrtimer_exit, sched_switch, sched_waking.
 *
 * Shared: uses waits, slots (slots.bpf.h), jvm_layouts and java_threads
 * through java_wait_key (jvm.bpf.h), the stack maps through waiter_stack and
 * note_waker (stacks.bpf.h). */
#ifndef PT_SCHED_BPF_H
#define PT_SCHED_BPF_H

/* ---- Probe mode "sched" (default): waits timed from the scheduler -------
 * A thread that blocks inside a futex wait is switched out with its syscall
 * registers saved; the wait ends when it is switched back in. The futex
 * system calls themselves carry no probe, so calls that do not sleep (most
 * calls on a hot lock) cost nothing. */

#define NR_FUTEX_WAITV 449
#define TASK_INTERRUPTIBLE 0x1

/* While this CPU runs the callback of an hrtimer_sleeper (the timeout of a
 * futex wait, among others), the thread that callback wakes: a waiter woken
 * by it timed out. Keyed by the thread rather than a plain "in a callback"
 * flag, so that an hrtimer_expire_exit that never reaches us (as a
 * sched_switch can fail to, see end_stale_wait) cannot turn later wakeups
 * of other threads into timeouts; sched_waking also consumes it. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u32);
} timer_wakes SEC(".maps");

/* The callback of every hrtimer_sleeper, looked up once by the loader with
 * find_hrtimer_wakeup: a __ksym would make libbpf parse all of /proc/kallsyms
 * at every start (about 70 ms of CPU). 0 (not found, or no right to read
 * kernel addresses): any hrtimer callback counts. */
__u64 hrtimer_wakeup_fn = 0;

SEC("syscall")
int find_hrtimer_wakeup(void *ctx)
{
    static const char name[] = "hrtimer_wakeup";
    __u64 addr = 0;

    if (bpf_kallsyms_lookup_name(name, sizeof(name), 0, &addr) == 0)
        hrtimer_wakeup_fn = addr;
    return 0;
}
#define PT_ANY_THREAD 0xffffffffu

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(hrtimer_entry, struct hrtimer *timer)
{
    __u32 zero = 0, *v = bpf_map_lookup_elem(&timer_wakes, &zero);
    if (!v)
        return 0;
    __u64 sleeper_fn = hrtimer_wakeup_fn;
    if (!bpf_core_type_exists(struct hrtimer_sleeper) || !sleeper_fn) {
        *v = PT_ANY_THREAD;
        return 0;
    }
    /* timer is the sleeper's first member */
    *v = (__u64)timer->function == sleeper_fn ?
         BPF_CORE_READ((struct hrtimer_sleeper *)timer, task, pid) : 0;
    return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(hrtimer_exit)
{
    __u32 zero = 0, *v = bpf_map_lookup_elem(&timer_wakes, &zero);
    if (v)
        *v = 0;
    return 0;
}

/* Threads (by tid, at tid mod 2^PT_QUIET_BITS) whose wait in progress needs
 * nothing of its wakeup: it has no timeout, so only a wake or a signal can
 * end it (the signal is seen as it is switched back in), and its waker's
 * stack is not wanted. Their sched_waking returns after one read of this
 * line, which stays shared in every CPU's cache as long as its threads'
 * waits stay quiet, instead of fetching the sleeping thread's record from
 * the CPU it slept on: on a thread pool, three runs in eight of the
 * programs, and most of their misses. A collision or a stale entry only
 * costs the full path. */
#define PT_QUIET_BITS 14
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1 << PT_QUIET_BITS);
    __type(key, __u32);
    __type(value, __u32);
} quiet_waits SEC(".maps");

/* The entry in quiet_waits of thread TID. */
static __always_inline __u32 *quiet_entry(__u32 tid)
{
    __u32 i = tid & ((1 << PT_QUIET_BITS) - 1);
    return bpf_map_lookup_elem(&quiet_waits, &i);
}

/* Marks the wait thread TID just began quiet, or not; written only when
 * that changes, so that the line stays shared. */
static __always_inline void note_quiet(__u32 id, bool quiet)
{
    __u32 *e = quiet_entry(id);
    if (!e)
        return;
    if (quiet) {
        if (*e != id)
            *e = id;
    } else if (*e == id) {
        *e = 0;
    }
}

/* Whether P has a signal pending that it does not block. TIF_SIGPENDING
 * is bit 2 on x86 before 6.18 and bit 1 since (the generic TIF bits), so
 * either bit only says to look, and the pending sets decide: bit 1 was
 * TIF_NOTIFY_RESUME, which rseq sets at every migration. */
static __always_inline bool signal_pending(struct task_struct *p)
{
    if (!(p->thread_info.flags & 0x6))
        return false;
    unsigned long pending = p->pending.signal.sig[0];
    struct signal_struct *sig = p->signal;
    if (sig)
        pending |= sig->shared_pending.signal.sig[0];
    return pending & ~p->blocked.sig[0];
}

/* The futex PREV (the current task) is going to sleep in, if any; *TIMED:
 * whether the call has a timeout (every waiting op, and futex_waitv, take
 * it as their fourth argument). */
static __always_inline bool sleeping_in_futex(struct task_struct *prev, __u64 *uaddr, bool *private, bool *timed)
{
    struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
    long nr = regs->orig_ax;    /* a BTF pointer: plain loads, no helper call each */

    if (nr == NR_FUTEX) {
        int op = (int)regs->si;
        if (!futex_wait_op(FUTEX_CMD(op)))
            return false;
        *uaddr = regs->di;
        *private = op & FUTEX_PRIVATE_FLAG;
        *timed = regs->r10 != 0;
        return true;
    }
    if (nr == NR_FUTEX_WAITV) {
        /* Charged to the first futex of the vector. */
        struct futex_waitv first;
        if (bpf_probe_read_user(&first, sizeof(first), (void *)regs->di))
            return false;
        *uaddr = first.uaddr;
        *private = first.flags & FUTEX2_PRIVATE;
        *timed = regs->r10 != 0;
        return true;
    }
    return false;
}

/* NEXT runs again: its futex wait or idle sleep ends. Called last, after
 * PREV's part, so that the time this program spent before NEXT could run
 * (a stack walk for PREV, say) is part of NEXT's wait, as it is of the
 * blocking call a caller or JFR would time. */
static __always_inline void switch_in(struct task_struct *next)
{
    __u64 now = 0;

    /* A thread resuming from a futex wait: the wait ends; from an idle
     * sleep: the sleep ends. Kernel threads (the idle task, half the
     * switches of a CPU going idle between waits) have no record. */
    struct pt_wait *w = next->flags & PF_KTHREAD ? NULL : bpf_task_storage_get(&waits, next, 0, 0);
    if (w && w->sleep_start) {
        __u64 t0 = part_clock();
        now = bpf_ktime_get_ns();
        idle_sleep_end(w, next->tgid, now);
        part_done(PT_PART_IN_IDLE, t0);
    }
    if (w && (w->flags & (PT_WAIT_ACTIVE | PT_WAIT_UPROBE)) == PT_WAIT_ACTIVE) {
        __u64 t0 = part_clock();
        struct pt_wait_end done;
        wait_end_copy(&done, w);
        /* No waking decided its end (a quiet wait's, say): a signal ended it, or a wake did. */
        if (!(done.flags & PT_WAIT_END_SEEN) && done.end == PT_END_WOKEN && signal_pending(next))
            done.end = PT_END_INTERRUPTED;
        if (!now)
            now = bpf_ktime_get_ns();
        struct pt_slot *s = bpf_map_lookup_elem(&slots, &done.slot);
        if (s)
            wait_finish(s, &done, w, now, done.end, next->pid, next->tgid, next);
        if (done.flags & PT_WAIT_CHAIN)
            chain_end(w, now);
        part_done(PT_PART_IN_END, t0);
    }
    if (trace_chains && w && w->chain_waiter)
        chain_holder_moved(w, next->pid, PT_CHAIN_RUNNING, now);
}

/* PREV, switched out asleep in a futex call on UADDR (PRIVATE, TIMED), its
 * wait record W: the wait opens on its blocker's slot, with its stack. */
static __always_inline void futex_wait_opens(__u64 *ctx, struct task_struct *prev, struct pt_wait *w, __u64 uaddr,
                                             bool private, bool timed, __u64 now, __u64 pid_tgid)
{
    __u32 idx;
    struct pt_blocker_key key;
    __u64 t0 = part_clock();
    if (!trace_java || !java_wait_key(&key, uaddr, pid_tgid, w)) {
        if (!trace_futex)
            return;
        futex_key(&key, uaddr, pid_tgid >> 32, private);
    }
    part_done(PT_PART_KEY, t0);
    t0 = part_clock();
    bool again;
    struct pt_slot *s = slot_get(&key, &idx, uaddr, pid_tgid, now, w->last_slot, &again);
    if (!s)
        return;
    /* A blocker this thread waited on lately had its class read then (its
     * line of the slot is one a wait need not touch). */
    if (!again)
        ask_klass_name(key.owner, note_klass(s, &key, w));
    part_done(PT_PART_SLOT, t0);
    t0 = part_clock();
    /* A timed wait's end when no waking reaches the program: its timeout.
     * The kernel now and then switches a timed-out waiter back in with no
     * sched_waking seen for it (about 1 in 10 000 of many_stacks' 100 us
     * waits, the task storage and recursion counters clean), and a
     * wakeup's default read those timeouts as wakeups. Decided before the
     * wait opens: a waking from now on is its own. */
    __u32 end = timed ? PT_END_TIMEOUT : PT_END_WOKEN, seen = 0;
    /* This switch is counted already: a waking one switch ago woke this wait. */
    if (w->early_sw + 1 == prev->nvcsw + prev->nivcsw) {
        end = w->early_end;
        seen = PT_WAIT_END_SEEN;
    }
    wait_start(s, idx, w, now, end, seen);
    if (trace_chains && (key.kind & 0xff) == PT_KIND_FUTEX)
        w->holder = futex_holder(prev, uaddr, private);
    part_done(PT_PART_START, t0);
    t0 = part_clock();
    bool naming, for_waker;
    if (!wait_stack_skipped(s, idx, w, pid_tgid, &naming, &for_waker))
        take_wait_stack(ctx, s, idx, w, pid_tgid, user_regs(), naming, for_waker, true);
    /* What note_waker would leave alone (no stack, or untimed under --threshold). */
    note_quiet((__u32)pid_tgid, !timed && (w->stack_id < 0 || !(w->flags & PT_WAIT_TIMED)));
    part_done(PT_PART_STACK, t0);
}

/* How PREV, switched out, stands (unless it waits on what parktrace times). */
static __always_inline __u32 switched_out_stand(bool preempt, unsigned int prev_state)
{
    if (preempt || !prev_state)
        return PT_CHAIN_RUNNABLE;
    if ((prev_state & PT_TASK_UNINTERRUPTIBLE) && !(prev_state & PT_TASK_NOLOAD))
        return PT_CHAIN_IO;
    return PT_CHAIN_SLEEPING;
}

static __always_inline struct pt_wait *switch_out_wait(__u64 *ctx, bool preempt, struct task_struct *prev,
                                                       unsigned int prev_state);

/* PREV stops running: a futex wait, or an idle sleep, begins; a chain it
 * heads is read again. */
static __always_inline void switch_out(__u64 *ctx, bool preempt, struct task_struct *prev, unsigned int prev_state)
{
    struct pt_wait *w = switch_out_wait(ctx, preempt, prev, prev_state);
    if (trace_chains && w && w->chain_waiter)
        chain_holder_moved(w, prev->pid, switched_out_stand(preempt, prev_state), 0);
}

/* The part of switch_out before chains: PREV's record, if it has one. */
static __always_inline struct pt_wait *switch_out_wait(__u64 *ctx, bool preempt, struct task_struct *prev,
                                                       unsigned int prev_state)
{
    __u64 now = 0, uaddr;
    struct pt_wait *w;
    bool private, timed;
    if (prev->flags & PF_KTHREAD)
        return NULL;
    if (preempt || !(prev_state & TASK_INTERRUPTIBLE)) {
        /* Switched out running (or into a disk sleep) with a wait open:
         * the switch in that ended it never reached us. Ended here from
         * the CPU time it ran since; left open, the next switch in would
         * end it, the time it was kept off the CPU counted as waiting (a
         * likely cause of a CI run's stuck wait charged 3.4 ms over its
         * own timing). No record, no cost: only traced threads have one. */
        w = bpf_task_storage_get(&waits, prev, 0, 0);
        if (w && (w->flags & (PT_WAIT_ACTIVE | PT_WAIT_UPROBE)) == PT_WAIT_ACTIVE) {
            __u64 t0 = part_clock();
            end_stale_wait(w, prev, bpf_ktime_get_ns());
            part_done(PT_PART_OUT_STALE, t0);
        }
        return w;
    }
    if (!tgid_traced(prev->tgid))
        return NULL;
    w = bpf_task_storage_get(&waits, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!w) {
        if (sleeping_in_futex(prev, &uaddr, &private, &timed))
            count_drop(PT_DROP_WAITING);
        return NULL;
    }
    /* A wait still open as its thread sleeps again lost the switch in that
     * ended it. Not only before a futex wait: a lock's holder that sleeps
     * holding it (in nanosleep, say) would be counted parked on it until
     * its next wait, one waiter over the threads that could wait (peak).
     * Ended before the kind of sleep is known, so that the verifier walks
     * it once. */
    if ((w->flags & (PT_WAIT_ACTIVE | PT_WAIT_UPROBE)) == PT_WAIT_ACTIVE) {
        __u64 t0 = part_clock();
        if (!now)
            now = bpf_ktime_get_ns();
        end_stale_wait(w, prev, now);
        part_done(PT_PART_OUT_STALE, t0);
    }
    if (!sleeping_in_futex(prev, &uaddr, &private, &timed)) {
        /* Any other interruptible sleep is idle (CSP's working time). */
        __u64 t0 = part_clock();
        idle_sleep_begin(w, prev, prev->tgid, now);
        part_done(PT_PART_OUT_IDLE, t0);
        return w;
    }
    if (w->flags & PT_WAIT_UPROBE)
        return w;   /* a park's own futex, already timed by the park uprobe */
    /* PREV is the current task: its ids by two loads, not a helper call. */
    __u64 pid_tgid = (__u64)prev->tgid << 32 | (__u32)prev->pid;
    if (!now)
        now = bpf_ktime_get_ns();
    futex_wait_opens(ctx, prev, w, uaddr, private, timed, now, pid_tgid);
    return w;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
             unsigned int prev_state)
{
    __u64 t0 = run_clock();
    switch_out(ctx, preempt, prev, prev_state);
    switch_in(next);
    if (t0)
        note_run(PT_TIMED_SWITCH, t0);
    return 0;
}

/* How the wait will end, decided as it is woken: woken by its own
 * hrtimer_sleeper's callback, it timed out; with a signal pending it was interrupted;
 * otherwise another thread woke it (FUTEX_WAKE, or the kernel's futex wake
 * when a joined thread exits). sched_waking, unlike sched_wakeup, always
 * runs in the waker's own context. */
/* How a wakeup of P ends its wait; consumes a timer_wakes match. */
static __always_inline __u32 wake_end(struct task_struct *p)
{
    __u32 zero = 0, *timer = bpf_map_lookup_elem(&timer_wakes, &zero);
    if (timer && *timer && (*timer == p->pid || *timer == PT_ANY_THREAD)) {
        if (*timer != PT_ANY_THREAD)
            *timer = 0;
        return PT_END_TIMEOUT;
    }
    if (signal_pending(p))
        return PT_END_INTERRUPTED;
    return PT_END_WOKEN;
}

static __always_inline int on_waking(__u64 *ctx, struct task_struct *p)
{
    bool on_cpu = *(volatile int *)&p->on_cpu;
    if (!on_cpu) {
        /* Off its CPU in a quiet wait: nothing to decide. on_cpu is read
         * first: it drops only after the switch out that marked the wait
         * (x86 keeps two loads in order; the barrier keeps the compiler
         * from swapping them). */
        asm volatile("" ::: "memory");
        __u32 *q = quiet_entry(p->pid);
        if (q && *q == p->pid)
            return 0;
    } else {
        /* Still on its CPU, on its way to sleep or being switched out:
         * only a futex sleep with a timeout needs its end from here. An
         * untimed one ends woken, or interrupted as its switch back in
         * sees. Its registers are all that is read of it. */
        struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(p);
        long nr = regs->orig_ax;
        if ((nr != NR_FUTEX && nr != NR_FUTEX_WAITV) || !regs->r10)
            return 0;
    }
    __u64 t0 = part_clock();
    struct pt_wait *w = bpf_task_storage_get(&waits, p, 0, 0);
    if (!w)
        return 0;
    __u32 flags = w->flags;
    if ((flags & (PT_WAIT_ACTIVE | PT_WAIT_UPROBE)) != PT_WAIT_ACTIVE) {
        /* A thread woken inside a timed futex wait after the scheduler
         * took its state but before its switch out (its timeout firing on
         * another CPU, say): the switch that starts the wait comes next,
         * and takes the end from here (matched by its context switch
         * count). Such a thread is still on its CPU: one that is not (a
         * server's thread woken from epoll or a socket) is never one. */
        if (!(flags & PT_WAIT_UPROBE) && on_cpu) {
            w->early_end = wake_end(p);
            w->early_sw = p->nvcsw + p->nivcsw;
        }
        return 0;
    }
    w->end = wake_end(p);
    if (trace_chains && w->end == PT_END_WOKEN)
        note_last_waker(w);
    /* Atomic: the waiter's CPU may still be opening the wait (wait_start). */
    __sync_fetch_and_or(&w->flags, PT_WAIT_END_SEEN);
    part_done(PT_PART_WAKE, t0);
    if (w->end == PT_END_WOKEN) {
        t0 = part_clock();
        note_waker(ctx, w, p->tgid);
        part_done(PT_PART_WAKER, t0);
    }
    return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking, struct task_struct *p)
{
    __u64 t0 = run_clock();
    int ret = on_waking(ctx, p);
    if (t0)
        note_run(PT_TIMED_WAKING, t0);
    return ret;
}

#endif
