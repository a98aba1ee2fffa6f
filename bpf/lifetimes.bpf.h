/* Processes and threads coming and going: exec (JVM discovery, unwind
 * tables asked for again), fork and exit (thread time alive per process for
 * CSP's denominator; children of `-- COMMAND` traced; a dead thread's wait
 * record reclaimed). Included by parktrace.bpf.c after slots and stacks.
 *
 * Owns: the maps execs (new programs for user space), procs (alive time per
 * registered process), uncounted (threads left out of it); the programs
 * exec_seen, exec_unwind, thread_exit, thread_fork.
 *
 * Shared: deletes from unwind_procs and unwind_asked (unwind.bpf.h); adds to
 * traced and reads waits (slots.bpf.h). */
#ifndef PT_LIFETIMES_BPF_H
#define PT_LIFETIMES_BPF_H

/* Programs started since the last look, for user space to check for a JVM
 * (system-wide tracing: no rescanning of /proc). */
struct {
    __uint(type, BPF_MAP_TYPE_QUEUE);
    __uint(max_entries, 4096);
    __type(value, __u32);
} execs SEC(".maps");

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_seen, struct task_struct *p)
{
    __u32 tgid = p->tgid;
    if (bpf_map_push_elem(&execs, &tgid, 0))
        count_drop(PT_DROP_EXECS);
    return 0;
}

/* A new program has new mappings: its tables are asked for again at its
 * first wait. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_unwind, struct task_struct *p)
{
    __u32 tgid = p->tgid;
    bpf_map_delete_elem(&unwind_procs, &tgid);
    bpf_map_delete_elem(&unwind_asked, &tgid);
    return 0;
}

/* Thread time alive per process, for CSP's denominator, kept for the
 * processes user space registers: alive(t) = threads * t - births + deaths,
 * so a thread adds its birth and death times and nothing per thread is kept. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 8192);
    __type(key, __u32);
    __type(value, struct pt_proc);
} procs SEC(".maps");

/* Threads left out of their process's alive time (the JVM's attach listener
 * that parktrace itself started): user space already took them out. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1024);
    __type(key, __u32);
    __type(value, __u8);
} uncounted SEC(".maps");

SEC("tp_btf/sched_process_exit")
int BPF_PROG(thread_exit, struct task_struct *p)
{
    __u64 now = bpf_ktime_get_ns();
    __u32 tgid = p->tgid, tid = p->pid;
    struct pt_wait *w = bpf_task_storage_get(&waits, p, 0, 0);
    if (w)
        end_stale_wait(w, p, now);
    /* The last thread: the process's entries go, so that neither a pid
     * used again nor thousands of short-lived children fill them. */
    if (BPF_CORE_READ(p, signal, live.counter) == 0) {
        if (cfi_unwind) {
            bpf_map_delete_elem(&unwind_procs, &tgid);
            bpf_map_delete_elem(&unwind_asked, &tgid);
        }
        if (filter_tgids)
            bpf_map_delete_elem(&traced, &tgid);
    }
    struct pt_proc *pr = bpf_map_lookup_elem(&procs, &tgid);
    if (pr && bpf_map_lookup_elem(&uncounted, &tid)) {
        bpf_map_delete_elem(&uncounted, &tid);
        pr = NULL;
    }
    if (pr) {
        __sync_fetch_and_add(&pr->deaths_ns, now);
        __sync_fetch_and_add(&pr->threads, -1);
    }
    return 0;
}

/* A new thread joins its process's alive time; with `-- COMMAND`, children
 * of traced processes are traced too. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(thread_fork, struct task_struct *parent, struct task_struct *child)
{
    __u32 ptgid = parent->tgid, ctgid = child->tgid;
    __u8 one = 1;

    if (follow_children && ptgid != ctgid && bpf_map_lookup_elem(&traced, &ptgid))
        bpf_map_update_elem(&traced, &ctgid, &one, BPF_ANY);
    struct pt_proc *pr = bpf_map_lookup_elem(&procs, &ctgid);
    if (pr) {
        __sync_fetch_and_add(&pr->births_ns, bpf_ktime_get_ns());
        __sync_fetch_and_add(&pr->threads, 1);
    }
    return 0;
}

#endif
