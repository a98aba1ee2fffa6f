/* Probe mode "syscalls" (--probes syscalls): futex waits timed at the
 * futex and futex_waitv system call tracepoints. Included by parktrace.bpf.c
 * after slots, futex and stacks.
 *
 * Owns: word_matches, syscall_wait_begin, syscall_wait_end; the programs
 * futex_enter, futex_exit, futex_waitv_enter, futex_waitv_exit. No maps.
 *
 * Shared: uses waits and slots (slots.bpf.h), futex_slot and the futex op
 * constants (futex.bpf.h), and the stack maps through waiter_stack
 * (stacks.bpf.h). */
#ifndef PT_SYSCALLS_BPF_H
#define PT_SYSCALLS_BPF_H

#define EAGAIN 11
#define ETIMEDOUT 110

/* ---- Probe mode "syscalls": waits timed at the futex system calls -------
 * Exact end kinds from the return value, at the price of a probe on every
 * futex call. Kept for kernels without BTF-enabled scheduler tracepoints
 * and for comparison in the benchmark. */

/* A value check: the kernel sleeps only while the word holds VAL. */
static __always_inline bool word_matches(__u64 uaddr, __u32 val)
{
    __u32 cur;
    return !bpf_probe_read_user(&cur, sizeof(cur), (void *)uaddr) && cur == val;
}

/* The enter side does only what must happen while the wait is live. With
 * CHECK_VAL the word is read once, just before anything shared is written
 * and shortly before the kernel's own check; a call that will return EAGAIN
 * then costs a slot lookup and no writes. */
static __always_inline int syscall_wait_begin(__u64 uaddr, bool private, bool check_val, __u32 val)
{
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    __u32 idx;

    struct pt_wait *w = bpf_task_storage_get(&waits, bpf_get_current_task_btf(), 0,
                                             BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!w) {
        count_drop(PT_DROP_WAITING);
        return 0;
    }
    __u64 now = bpf_ktime_get_ns();
    struct pt_slot *s = futex_slot(uaddr, private, pid_tgid, now, &idx);
    if (!s)
        return 0;
    /* Last look at the word before writing anything shared: on a hot lock
     * it has often changed by now, and then the kernel returns EAGAIN. */
    if (check_val && !word_matches(uaddr, val))
        return 0;
    reclaim_stale(w, now);
    wait_start(s, idx, w, now, PT_END_WOKEN, 0);
    return 0;
}

static __always_inline int syscall_wait_end(void *ctx, long ret)
{
    struct pt_wait *wp = bpf_task_storage_get(&waits, bpf_get_current_task_btf(), 0, 0);
    if (!wp || !(wp->flags & PT_WAIT_ACTIVE))
        return 0;
    struct pt_slot *s = bpf_map_lookup_elem(&slots, &wp->slot);
    if (!s)
        return 0;
    __u64 now = bpf_ktime_get_ns();
    if (ret == -EAGAIN) {
        /* The word changed before the kernel slept: not a wait. */
        drop_wait(s, wp, now);
        return 0;
    }
    struct pt_wait_end w;
    wait_end_copy(&w, wp);
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    /* Still in the kernel: the user stack is as it was when it slept. */
    if ((w.flags & PT_WAIT_TIMED) && !stack_skipped(&wp->wait_gap, false)) {
        w.stack_id = waiter_stack(ctx, w.slot, pid_tgid, wp, user_regs(), false, false, true);
        w.odds = wp->odds;
    }
    __u32 end = ret == -ETIMEDOUT ? PT_END_TIMEOUT : ret < 0 ? PT_END_INTERRUPTED : PT_END_WOKEN;
    wait_finish(s, &w, wp, now, end, (__u32)pid_tgid, pid_tgid >> 32, NULL);
    return 0;
}

SEC("tracepoint/syscalls/sys_enter_futex")
int futex_enter(struct trace_event_raw_sys_enter *ctx)
{
    int op = FUTEX_CMD((int)ctx->args[1]);

    if (!futex_wait_op(op) || !tgid_traced(bpf_get_current_pid_tgid() >> 32))
        return 0;
    /* The value-checked waits; the PI lock ops have no value to check. */
    bool check_val = op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET || op == FUTEX_WAIT_REQUEUE_PI;
    return syscall_wait_begin(ctx->args[0], ctx->args[1] & FUTEX_PRIVATE_FLAG, check_val,
                              (__u32)ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit(struct trace_event_raw_sys_exit *ctx)
{
    return syscall_wait_end(ctx, ctx->ret);
}

SEC("tracepoint/syscalls/sys_enter_futex_waitv")
int futex_waitv_enter(struct trace_event_raw_sys_enter *ctx)
{
    struct futex_waitv first;

    if (!tgid_traced(bpf_get_current_pid_tgid() >> 32) || ctx->args[1] == 0)
        return 0;
    if (bpf_probe_read_user(&first, sizeof(first), (void *)ctx->args[0]))
        return 0;
    return syscall_wait_begin(first.uaddr, first.flags & FUTEX2_PRIVATE, true, (__u32)first.val);
}

SEC("tracepoint/syscalls/sys_exit_futex_waitv")
int futex_waitv_exit(struct trace_event_raw_sys_exit *ctx)
{
    return syscall_wait_end(ctx, ctx->ret);
}

#endif
