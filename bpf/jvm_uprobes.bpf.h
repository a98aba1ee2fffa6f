/* The uprobes in HotSpot: java_thread_start at JavaThread::run, in every
 * probe mode, so a new Java thread's first park is recognised;
 * jvm_safepoint at SafepointSynchronize::begin and ::end; and probe
 * mode "uprobes" (--probes uprobes): Java parks timed at Unsafe_Park
 * (uprobe and uretprobe), their wakers taken at Unsafe_Unpark. Included by
 * parktrace.bpf.c last, which keeps these programs last in the object.
 *
 * Owns: the map pending_wakers (an unparked thread's waker stack);
 * javathread_of_env; the programs java_thread_start, jvm_safepoint, unsafe_park,
 * unsafe_park_exit, unsafe_unpark.
 *
 * Shared: uses jvm_layouts and java_threads (jvm.bpf.h), stacks (stacks.bpf.h),
 * waits, slots and slot_index (slots.bpf.h); its waits make their own
 * waker_time entries (wait_end.bpf.h wait_finish). */
#ifndef PT_JVM_UPROBES_BPF_H
#define PT_JVM_UPROBES_BPF_H

/* A Java thread starting (JavaThread::run, on the thread itself) is known at
 * once, so its first park is recognised; one uprobe hit per thread start. */
SEC("uprobe")
int BPF_KPROBE(java_thread_start, void *thread)
{
    __u64 pid_tgid = bpf_get_current_pid_tgid(), jt = (__u64)thread;
    __u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
    if (!tgid_traced(tgid) || !bpf_map_lookup_elem(&jvm_layouts, &tgid))
        return 0;
    bpf_map_update_elem(&java_threads, &tid, &jt, BPF_ANY);
    return 0;
}

/* SafepointSynchronize::begin and ::end, in probe mode "sched": a
 * stop-the-world collector moves objects only in between, so parks may
 * keep what they read of the heap while safepoint_gen stands still (only
 * for JVMs whose collector stops the world: stable_oops). A few hits a
 * second per JVM. */
SEC("uprobe")
int BPF_KPROBE(jvm_safepoint)
{
    __sync_fetch_and_add(&safepoint_gen, 1);
    return 0;
}

/* ---- Probe mode "uprobes": parks timed at Unsafe_Park and Unsafe_Unpark --
 * The plain way, kept for comparison: every Unsafe.park call pays a uprobe
 * (about 11 us here), blocking or not, and every unpark another. Parks that
 * return without sleeping (the permit was there) are counted as fast parks,
 * not waits: the thread's voluntary context switches did not move. */

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32);
    __type(value, struct pt_pending_waker);
} pending_wakers SEC(".maps");

/* The JavaThread of the current thread, from the JNIEnv it passed: its
 * offset is learnt from a thread user space has listed, and a guess for
 * another thread counts only if its OSThread names that thread. */
static __always_inline __u64 javathread_of_env(struct pt_jvm_layout *l, __u64 env, __u32 tid)
{
    __u64 *known = bpf_map_lookup_elem(&java_threads, &tid);
    if (known) {
        if (!l->jni_env && env > *known)
            l->jni_env = env - *known;
        return *known;
    }
    if (!l->jni_env || env < l->jni_env)
        return 0;
    __u64 jt = env - l->jni_env, osthread = 0;
    __s32 os_tid = 0;
    if (bpf_probe_read_user(&osthread, sizeof(osthread), (void *)(jt + l->osthread)) || !osthread ||
        bpf_probe_read_user(&os_tid, sizeof(os_tid), (void *)(osthread + l->os_tid)) || (__u32)os_tid != tid)
        return 0;
    bpf_map_update_elem(&java_threads, &tid, &jt, BPF_ANY);
    return jt;
}

SEC("uprobe")
int BPF_KPROBE(unsafe_park, void *env, void *unsafe, bool absolute, __s64 time)
{
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    __u32 tgid = pid_tgid >> 32, idx;
    if (!tgid_traced(tgid))
        return 0;
    struct pt_jvm_layout *l = bpf_map_lookup_elem(&jvm_layouts, &tgid);
    if (!l)
        return 0;
    __u64 jt = javathread_of_env(l, (__u64)env, (__u32)pid_tgid);
    if (!jt)
        return 0;
    struct task_struct *task = bpf_get_current_task_btf();
    struct pt_wait *w = bpf_task_storage_get(&waits, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!w) {
        count_drop(PT_DROP_WAITING);
        return 0;
    }
    __u64 now = bpf_ktime_get_ns();
    reclaim_stale(w, now);
    struct pt_blocker_key key;
    park_blocker_key(l, jt, tgid, &key);
    bool again;
    struct pt_slot *s = slot_get(&key, &idx, key.addr, pid_tgid, now, w->last_slot, &again);
    if (!s)
        return 0;
    ask_klass_name(key.owner, note_klass(s, &key, w));
    wait_start(s, idx, w, now, PT_END_WOKEN, PT_WAIT_UPROBE | (time ? PT_WAIT_PARK_TIMED : 0));
    w->nvcsw = task->nvcsw;
    bool naming, for_waker;
    if (!wait_stack_skipped(s, idx, w, pid_tgid, &naming, &for_waker))
        take_wait_stack(ctx, s, idx, w, pid_tgid, ctx, naming, for_waker, true);
    return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(unsafe_park_exit)
{
    struct task_struct *task = bpf_get_current_task_btf();
    struct pt_wait *w = bpf_task_storage_get(&waits, task, 0, 0);
    if (!w || (w->flags & (PT_WAIT_ACTIVE | PT_WAIT_UPROBE)) != (PT_WAIT_ACTIVE | PT_WAIT_UPROBE))
        return 0;
    __u64 now = bpf_ktime_get_ns(), pid_tgid = bpf_get_current_pid_tgid();
    __u32 tid = (__u32)pid_tgid;
    struct pt_slot *s = bpf_map_lookup_elem(&slots, &w->slot);
    if (!s) {
        w->flags = 0;
        return 0;
    }
    struct pt_pending_waker waker = { .stack_id = -1 }, *pw = bpf_map_lookup_elem(&pending_wakers, &tid);
    if (pw) {
        waker = *pw;
        bpf_map_delete_elem(&pending_wakers, &tid);
    }
    if (task->nvcsw == w->nvcsw) {
        __sync_fetch_and_add(&s->fast_parks, 1);
        drop_wait(s, w, now);
        return 0;
    }
    struct pt_wait_end done;
    wait_end_copy(&done, w);
    /* Unparked: woken. Otherwise a timed park timed out, and an untimed one
     * was interrupted (Thread.interrupt unparks from inside the JVM). */
    __u32 end = waker.tgid ? PT_END_WOKEN : (done.flags & PT_WAIT_PARK_TIMED) ? PT_END_TIMEOUT
                                                                                : PT_END_INTERRUPTED;
    done.waker_stack = waker.stack_id;
    done.waker_tgid = waker.tgid;
    wait_finish(s, &done, w, now, end, tid, pid_tgid >> 32, NULL);
    return 0;
}

SEC("uprobe")
int BPF_KPROBE(unsafe_unpark, void *env, void *unsafe, void *jthread)
{
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    __u32 tgid = pid_tgid >> 32;
    if (!tgid_traced(tgid) || !jthread || ((__u64)jthread & 1))
        return 0;
    struct pt_jvm_layout *l = bpf_map_lookup_elem(&jvm_layouts, &tgid);
    if (!l)
        return 0;
    /* A JNI handle holds a full oop; eetop is the target's JavaThread*. */
    __u64 thread_oop = 0, jt = 0, osthread = 0;
    __u32 tid = 0;
    if (bpf_probe_read_user(&thread_oop, sizeof(thread_oop), jthread) || !thread_oop ||
        bpf_probe_read_user(&jt, sizeof(jt), (void *)(thread_oop + l->eetop)) || !jt ||
        bpf_probe_read_user(&osthread, sizeof(osthread), (void *)(jt + l->osthread)) || !osthread ||
        bpf_probe_read_user(&tid, sizeof(tid), (void *)(osthread + l->os_tid)) || !tid)
        return 0;
    struct pt_pending_waker pw = { .stack_id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK | BPF_F_REUSE_STACKID), .tgid = tgid };
    if (pw.stack_id >= 0) {
        struct pt_blocker_key key;
        park_blocker_key(l, jt, tgid, &key);
        __u32 *idx = bpf_map_lookup_elem(&slot_index, &key);
        if (idx)
            note_stack(*idx, pw.stack_id, pid_tgid, false);
    } else {
        count_drop(PT_DROP_STACKS);
    }
    bpf_map_update_elem(&pending_wakers, &tid, &pw, BPF_ANY);
    return 0;
}

#endif
