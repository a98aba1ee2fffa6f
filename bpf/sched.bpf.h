/* Probe mode "sched" (default): futex waits, and Java parks, monitor entries
 * and Object.wait, timed from the scheduler (tp_btf sched_switch,
 * sched_waking, hrtimer_expire_entry/exit). Included by parktrace.bpf.c after
 * slots, futex, jvm and stacks.
 *
 * Owns: the map in_hrtimer; sleeping_in_futex; the programs hrtimer_entry,
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

#define NR_FUTEX 202
#define NR_FUTEX_WAITV 449
#define TASK_INTERRUPTIBLE 0x1

/* Set while this CPU runs an hrtimer callback: a futex timeout is the
 * callback of the waiter's hrtimer_sleeper waking it. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u32);
} in_hrtimer SEC(".maps");

static __always_inline void mark_hrtimer(__u32 on)
{
    __u32 zero = 0, *v = bpf_map_lookup_elem(&in_hrtimer, &zero);
    if (v)
        *v = on;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(hrtimer_entry)
{
    mark_hrtimer(1);
    return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(hrtimer_exit)
{
    mark_hrtimer(0);
    return 0;
}

/* The futex PREV (the current task) is going to sleep in, if any. */
static __always_inline bool sleeping_in_futex(struct task_struct *prev, __u64 *uaddr, bool *private)
{
    struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
    long nr = BPF_CORE_READ(regs, orig_ax);

    if (nr == NR_FUTEX) {
        int op = (int)BPF_CORE_READ(regs, si);
        if (!futex_wait_op(FUTEX_CMD(op)))
            return false;
        *uaddr = BPF_CORE_READ(regs, di);
        *private = op & FUTEX_PRIVATE_FLAG;
        return true;
    }
    if (nr == NR_FUTEX_WAITV) {
        /* Charged to the first futex of the vector. */
        struct futex_waitv first;
        if (bpf_probe_read_user(&first, sizeof(first), (void *)BPF_CORE_READ(regs, di)))
            return false;
        *uaddr = first.uaddr;
        *private = first.flags & FUTEX2_PRIVATE;
        return true;
    }
    return false;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
             unsigned int prev_state)
{
    __u64 now = 0;

    /* A thread resuming from a futex wait: the wait ends. */
    struct pt_wait *w = bpf_task_storage_get(&waits, next, 0, 0);
    if (w && (w->flags & (PT_WAIT_ACTIVE | PT_WAIT_UPROBE)) == PT_WAIT_ACTIVE) {
        struct pt_wait done = *w;
        w->flags = 0;
        now = bpf_ktime_get_ns();
        struct pt_slot *s = bpf_map_lookup_elem(&slots, &done.slot);
        if (s)
            wait_finish(s, &done, w, now, done.end, next->pid, next->tgid);
    }

    /* A thread going to sleep inside a futex wait: a wait begins. */
    __u64 uaddr;
    bool private;
    __u32 idx;
    if (preempt || !(prev_state & TASK_INTERRUPTIBLE) || !tgid_traced(prev->tgid) ||
        !sleeping_in_futex(prev, &uaddr, &private))
        return 0;
    w = bpf_task_storage_get(&waits, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!w) {
        count_drop(PT_DROP_WAITING);
        return 0;
    }
    if (w->flags & PT_WAIT_UPROBE)
        return 0;     /* a park's own futex, already timed by the park uprobe */
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    if (!now)
        now = bpf_ktime_get_ns();
    struct pt_blocker_key key;
    if (!trace_java || !java_wait_key(&key, uaddr, pid_tgid)) {
        if (!trace_futex) {
            reclaim_stale(w, now);
            return 0;
        }
        futex_key(&key, uaddr, pid_tgid >> 32, private);
    }
    reclaim_stale(w, now);
    struct pt_slot *s = slot_get(&key, &idx, uaddr, pid_tgid, now);
    if (!s)
        return 0;
    note_klass(s, &key);
    wait_start(s, idx, w, now);
    if (w->flags & PT_WAIT_TIMED)
        w->stack_id = waiter_stack(ctx, idx, pid_tgid, w, user_regs());
    return 0;
}

/* How the wait will end, decided as it is woken: inside an hrtimer callback
 * it is the wait's timeout; with a signal pending it was interrupted;
 * otherwise another thread woke it (FUTEX_WAKE, or the kernel's futex wake
 * when a joined thread exits). sched_waking, unlike sched_wakeup, always
 * runs in the waker's own context. */
#define TIF_SIGPENDING 2

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking, struct task_struct *p)
{
    __u32 zero = 0;
    struct pt_wait *w = bpf_task_storage_get(&waits, p, 0, 0);
    if (!w || (w->flags & (PT_WAIT_ACTIVE | PT_WAIT_UPROBE)) != PT_WAIT_ACTIVE)
        return 0;
    __u32 *timer = bpf_map_lookup_elem(&in_hrtimer, &zero);
    if (timer && *timer)
        w->end = PT_END_TIMEOUT;
    else if (p->thread_info.flags & (1UL << TIF_SIGPENDING))
        w->end = PT_END_INTERRUPTED;
    else {
        w->end = PT_END_WOKEN;
        note_waker(ctx, w, p->tgid);
    }
    return 0;
}

#endif
