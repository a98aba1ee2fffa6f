/* Processes and threads coming and going: exec (JVM discovery, unwind
 * tables asked for again), fork and exit (thread time alive per process for
 * CSP's denominator; children of `-- COMMAND` traced; a dead thread's wait
 * record reclaimed), and the idle sleeps that CSP's working time leaves out.
 * Included by parktrace.bpf.c after slots and stacks, before sched.
 *
 * Owns: the maps execs (new programs for user space), procs (alive and idle
 * time per registered process), uncounted (threads left out of it),
 * unwatched_life (threads that waited and died before their process was
 * registered), exited_life (the same for a process that ended before it
 * was); the globals procs_gen, run_start_ns; idle_sleep_begin, idle_sleep_end; the programs
 * exec_seen, exec_unwind, exec_forget_park, thread_exit, thread_fork.
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
    /* The exec'ing task is current: one outside --cgroup is no JVM to find. */
    if (cgroup_filters && !current_in_cgroups())
        return 0;
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

/* A thread that execs keeps its record: the JavaThread its last park
 * found (jvm.bpf.h) belonged to the old program. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_forget_park, struct task_struct *p)
{
    struct pt_wait *w = bpf_task_storage_get(&waits, p, 0, 0);
    if (w)
        w->park.jt = 0;
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

/* Thread time lived since the run's start by threads that waited and then
 * died before user space registered their process (system-wide, a process
 * is registered at its first blocker's naming, a tick later or more): their
 * waits are counted, so their lives must be too, or a process is charged
 * more waiting than its threads lived. Taken by user space as it registers
 * the process; let go at the process's end, so it holds live processes
 * only (a plain hash: an LRU's update cost a thread's exit 0.7 us). */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 8192);
    __type(key, __u32);
    __type(value, __u64);
} unwatched_life SEC(".maps");

/* The sum in unwatched_life of a process whose last thread exited before
 * user space registered it, that thread's life added when it waited: its
 * waits are counted, and so must its lives be (short-lived processes that
 * came and went while parktrace's loop was held up had rows and no process
 * entry). Taken by user space as it registers the process; an LRU, as a
 * process that never gets registered leaves its entry (this update is paid
 * at a process's end only). */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, __u64);
} exited_life SEC(".maps");

/* When the run started (CLOCK_MONOTONIC, set by user space before it
 * attaches): a life is counted from it at the earliest. */
__u64 run_start_ns = 0;

/* P's thread time alive in the run at NOW: from its start or the run's. */
static __always_inline __u64 thread_life(const struct task_struct *p, __u64 now)
{
    __u64 born = p->start_time, from = born > run_start_ns ? born : run_start_ns;
    return now > from ? now - from : 0;
}

/* Bumped by user space whenever it adds a process to procs or a thread to
 * uncounted: a thread reads whether its sleeps count once per change, not
 * once per sleep. */
__u32 procs_gen = 1;
/* Processes that have exited: user space looks for the dead among the
 * processes its stack cache holds only when this has moved. */
__u64 process_exits = 0;

/* A sleep that began at START ends at NOW, in its process's entry PR. */
static __always_inline void sleep_ended(struct pt_proc *pr, __u64 start, __u64 now)
{
    __sync_fetch_and_add(&pr->slept_ns, now - start);
    __sync_fetch_and_add(&pr->sleep_starts_ns, -start);
    __sync_fetch_and_add(&pr->sleepers, -1);
}

/* Thread T of process TGID is switched out in an interruptible sleep that
 * is no futex wait (nanosleep, epoll_wait, poll, accept, a socket read):
 * idle time for CSP's working time, when its process is registered. W is
 * the thread's record. NOW: 0 when the caller has not read the clock yet,
 * read here only for a sleep that counts (a server's threads sleep in epoll
 * at every request). */
static __always_inline void idle_sleep_begin(struct pt_wait *w, struct task_struct *t, __u32 tgid, __u64 now)
{
    __u32 gen = procs_gen;
    if (w->watch_gen == gen && !w->watched)
        return;
    struct pt_proc *pr = bpf_map_lookup_elem(&procs, &tgid);
    if (w->watch_gen != gen) {
        __u32 tid = t->pid;
        w->watch_gen = gen;
        w->watched = pr && !bpf_map_lookup_elem(&uncounted, &tid);
    }
    if (!w->watched || !pr)
        return;
    if (!now)
        now = bpf_ktime_get_ns();
    /* The switch that ended the last one never reached us: ended now. */
    if (w->sleep_start)
        sleep_ended(pr, w->sleep_start, now);
    w->sleep_start = now;
    __sync_fetch_and_add(&pr->sleep_starts_ns, now);
    __sync_fetch_and_add(&pr->sleepers, 1);
}

/* The idle sleep of the thread with record W ends at NOW. */
static __always_inline void idle_sleep_end(struct pt_wait *w, __u32 tgid, __u64 now)
{
    __u64 start = w->sleep_start;
    w->sleep_start = 0;
    struct pt_proc *pr = bpf_map_lookup_elem(&procs, &tgid);
    if (pr)
        sleep_ended(pr, start, now);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(thread_exit, struct task_struct *p)
{
    __u64 now = bpf_ktime_get_ns();
    __u32 tgid = p->tgid, tid = p->pid;
    struct pt_wait *w = bpf_task_storage_get(&waits, p, 0, 0);
    if (w)
        end_stale_wait(w, p, now);
    if (w && w->sleep_start)
        idle_sleep_end(w, tgid, now);
    /* The last thread: the process's entries go, so that neither a pid
     * used again nor thousands of short-lived children fill them. */
    bool last = BPF_CORE_READ(p, signal, live.counter) == 0;
    if (last) {
        __sync_fetch_and_add(&process_exits, 1);
        if (cfi_unwind) {
            bpf_map_delete_elem(&unwind_procs, &tgid);
            bpf_map_delete_elem(&unwind_asked, &tgid);
        }
        if (filter_tgids)
            bpf_map_delete_elem(&traced, &tgid);
        go_process_gone(tgid);
    }
    struct pt_proc *pr = bpf_map_lookup_elem(&procs, &tgid);
    if (last) {
        /* Threads killed together can each read no thread left (each
         * decremented the count before any reached here): the sum is taken
         * by one of them, and each adds its own life, none overwrites. */
        __u64 *sum = bpf_map_lookup_elem(&unwatched_life, &tgid);
        if (!pr && (sum || (w && w->last_slot[0]))) {
            __u64 total = sum ? __sync_lock_test_and_set(sum, 0) : 0;
            if (w && w->last_slot[0])
                total += thread_life(p, now);
            __u64 *kept = bpf_map_lookup_elem(&exited_life, &tgid);
            if (!kept && bpf_map_update_elem(&exited_life, &tgid, &total, BPF_NOEXIST))
                kept = bpf_map_lookup_elem(&exited_life, &tgid);
            if (kept)
                __sync_fetch_and_add(kept, total);
        }
        if (sum)
            bpf_map_delete_elem(&unwatched_life, &tgid);
    }
    if (pr && bpf_map_lookup_elem(&uncounted, &tid)) {
        bpf_map_delete_elem(&uncounted, &tid);
        return 0;
    }
    if (pr) {
        __sync_fetch_and_add(&pr->deaths_ns, now);
        __sync_fetch_and_add(&pr->threads, -1);
    } else if (w && w->last_slot[0] && !last) {
        __u64 life = thread_life(p, now);
        __u64 *sum = bpf_map_lookup_elem(&unwatched_life, &tgid);
        /* The first to die makes the entry; another of its threads may be
         * making it too, and is then added to. */
        if (!sum && !bpf_map_update_elem(&unwatched_life, &tgid, &life, BPF_NOEXIST))
            return 0;
        if (!sum)
            sum = bpf_map_lookup_elem(&unwatched_life, &tgid);
        if (sum)
            __sync_fetch_and_add(sum, life);
        else
            count_drop(PT_DROP_LIVES);
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
