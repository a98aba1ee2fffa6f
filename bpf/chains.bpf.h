/* Wait chains (docs/contract/metrics.md, "Wait chains"): a wait whose
 * blocker's owner is known (a glibc mutex's __owner) follows that holder,
 * what the holder waits on and its holder, PT_CHAIN_DEPTH deep, and charges
 * each part of the wait's time to the chain as it stood then. Included by
 * parktrace.bpf.c after stacks.bpf.h (waiter_stack begins a chain where
 * the wait's stack is kept, so chains follow the stack budget) and before
 * sched.bpf.h (whose switches read and re-read them).
 *
 * Owns: the maps chain_time, chain_comms, chain_kstacks and chain_kscratch;
 * chain_kstack, chain_name, futex_holder, java_owner, note_last_waker,
 * chain_read, chain_begin, chain_end, chain_holder_moved. Its budget,
 * chain_budget, is budget.bpf.h's; heap_ref is jvm.bpf.h's.
 *
 * The holders are found by their thread ids (bpf_task_from_pid) and their
 * own wait records, so nothing is written at a switch that no chain
 * watches: a holder's record names the one waiter (chain_waiter) whose
 * chain its switches re-read. */
#ifndef PT_CHAINS_BPF_H
#define PT_CHAINS_BPF_H

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern struct task_struct *bpf_task_from_vpid(s32 vpid) __ksym __weak;   /* 6.13 */
extern void bpf_task_release(struct task_struct *p) __ksym;

/* Chains (key: the links and the end) -> the time and waits charged. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 65536);     /* as stack_time: one a (blocker, waiter) at most, most often */
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct pt_chain_key);
    __type(value, struct pt_chain_val);
} chain_time SEC(".maps");

/* The threads met in chains, by tid: their names then, for user space,
 * which may report a chain after its threads have exited. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 8192);
    __type(key, __u32);
    __type(value, struct pt_chain_comm);
} chain_comms SEC(".maps");

/* Kernel stacks where chains end in I/O, by a hash of their frames, for
 * user space to name the frame that holds the thread (end_frame); and one
 * per CPU to take them in. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, __u32);
    __type(value, struct pt_chain_kstack);
} chain_kstacks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct pt_chain_kstack);
} chain_kscratch SEC(".maps");

/* T's kernel stack (T off its CPU, or the task being switched out) into
 * chain_kstacks: its id, 0 when none could be taken. */
static __noinline __u32 chain_kstack(struct task_struct *t)
{
    __u32 zero = 0;
    struct pt_chain_kstack *b = bpf_map_lookup_elem(&chain_kscratch, &zero);
    if (!b)
        return 0;
    long n = bpf_get_task_stack(t, b->ip, sizeof(b->ip), 0);
    if (n <= 0)
        return 0;
    __u32 h = 0x9e3779b9;
    for (int i = 0; i < PT_CHAIN_KFRAMES; i++) {
        if (i * 8 >= n)
            b->ip[i] = 0;
        h = (h ^ (__u32)b->ip[i] ^ (__u32)(b->ip[i] >> 32)) * 0x01000193;
    }
    h |= 1;
    bpf_map_update_elem(&chain_kstacks, &h, b, BPF_NOEXIST);
    return h;
}

/* The kernel stack of T, in I/O (its record HW, if any): the one taken
 * within the last PT_KSTACK_KEEP_NS, else a new one. A writer's every
 * fsync, each the end of the chains through it, would walk it again. */
#define PT_KSTACK_KEEP_NS 20000000ull
static __always_inline __u32 io_kstack_of(struct task_struct *t, struct pt_wait *hw)
{
    __u64 now = bpf_ktime_get_ns();
    if (hw && hw->kstack && now - hw->kstack_ns < PT_KSTACK_KEEP_NS)
        return hw->kstack;
    __u32 id = chain_kstack(t);
    if (hw) {
        hw->kstack = id;
        hw->kstack_ns = now;
    }
    return id;
}

/* Names thread T (TID) in chain_comms, again when it was renamed (a JVM
 * names its main thread after its first waits). */
static __always_inline void chain_name(struct task_struct *t, __u32 tid)
{
    struct pt_chain_comm c;
    bpf_probe_read_kernel(c.comm, sizeof(c.comm), t->comm);
    const struct pt_chain_comm *had = bpf_map_lookup_elem(&chain_comms, &tid);
    const __u64 *a = (const __u64 *)c.comm;
    if (had && ((const __u64 *)had->comm)[0] == a[0] && ((const __u64 *)had->comm)[1] == a[1])
        return;
    bpf_map_update_elem(&chain_comms, &tid, &c, BPF_ANY);
}

#define PT_PID_MAX_LIMIT (1 << 22)   /* the kernel's bound on any pid_max */
#define PT_TASK_UNINTERRUPTIBLE 0x2
#define PT_TASK_NOLOAD 0x400    /* with UNINTERRUPTIBLE: an idle kernel wait, not I/O */

/* How T stands when it waits on nothing parktrace times. */
static __always_inline __u32 task_stand(struct task_struct *t)
{
    if (t->on_cpu)
        return PT_CHAIN_RUNNING;
    unsigned int st = t->__state;
    if (!st)
        return PT_CHAIN_RUNNABLE;
    if ((st & PT_TASK_UNINTERRUPTIBLE) && !(st & PT_TASK_NOLOAD))
        return PT_CHAIN_IO;
    return PT_CHAIN_SLEEPING;
}

/* The host's id of thread VPID of the current task's PID namespace (a
 * container's), or 0; VPID itself in the host's. Holders are followed by
 * the host's ids (bpf_task_from_pid), from any thread's context. */
static __always_inline __u32 host_tid(struct task_struct *cur, __s32 vpid)
{
    if (vpid <= 0 || vpid >= PT_PID_MAX_LIMIT)
        return 0;
    if (!cur->thread_pid->level)
        return (__u32)vpid;
    if (!bpf_task_from_vpid)
        return 0;
    struct task_struct *t = bpf_task_from_vpid(vpid);
    if (!t)
        return 0;
    __u32 tid = t->pid;
    bpf_task_release(t);
    return tid;
}

/* The host's tid in the int 8 bytes into the futex at UADDR of the current
 * task's address space (CUR's), where a glibc mutex keeps its owner; 0:
 * none. In a container's PID namespace it is that namespace's id. */
static __always_inline __u32 futex_owner(struct task_struct *cur, __u64 uaddr)
{
    __s32 vpid = 0;
    if (bpf_probe_read_user(&vpid, sizeof(vpid), (void *)(uaddr + 8)) || vpid <= 0)
        return 0;
    return host_tid(cur, vpid);
}

/* The owner the glibc mutex at UADDR records (__owner, the int 8 bytes
 * in), as the host's tid, for CUR's futex wait there; 0: none. Read for
 * every futex wait while chains are on, kept or not: a chain that reaches
 * this thread as its middle link needs it. Any futex is read so; user
 * space ends a chain at a blocker whose class records no owner, and a
 * private futex's holder must be of its own process (chain_read). */
static __always_inline __u32 futex_holder(struct task_struct *cur, __u64 uaddr, bool private)
{
    __u32 owner = futex_owner(cur, uaddr);
    if (!owner || owner == (__u32)cur->pid)
        return 0;
    return owner | (private ? PT_HOLDER_PRIVATE : 0);
}

/* Holder record HW's switches are to re-read WAITER's chain: kept among
 * its PT_CHAIN_WAITERS (a full set loses one, whose chain then stands as
 * last read). */
static __always_inline void chain_watch(struct pt_wait *hw, __u32 waiter)
{
    __u32 free = PT_CHAIN_WAITERS;
    for (__u32 j = 0; j < PT_CHAIN_WAITERS; j++) {
        __u32 v = hw->chain_waiters[j];
        if (v == waiter)
            return;
        if (!v && free == PT_CHAIN_WAITERS)
            free = j;
    }
    hw->chain_waiters[free < PT_CHAIN_WAITERS ? free : waiter % PT_CHAIN_WAITERS] = waiter;
    hw->chain_waiter = 1;
}

/* The thread id of JavaThread JT of the current process (laid out as L),
 * whose java.lang.Thread is OOP, or 0 unless the two lead to each other:
 * JT's Thread handle holds OOP, and OOP's eetop holds JT. */
static __always_inline __u32 javathread_tid(const struct pt_jvm_layout *l, __u64 jt, __u64 oop)
{
    __u64 handle = 0, back = 0, again = 0, osthread = 0;
    if (!jt || (jt & 7) || bpf_probe_read_user(&handle, sizeof(handle), (void *)(jt + l->thread_obj)) || !handle ||
        bpf_probe_read_user(&back, sizeof(back), (void *)handle) || !back || (oop && back != oop))
        return 0;
    if (!oop && (bpf_probe_read_user(&again, sizeof(again), (void *)(back + l->eetop)) || again != jt))
        return 0;
    __s32 tid = 0;
    if (bpf_probe_read_user(&osthread, sizeof(osthread), (void *)(jt + l->osthread)) || !osthread ||
        bpf_probe_read_user(&tid, sizeof(tid), (void *)(osthread + l->os_tid)))
        return 0;
    /* The JVM's own id of the thread: in a container, its namespace's. */
    __u32 host = host_tid(bpf_get_current_task_btf(), tid);
    return host ? host | PT_HOLDER_PRIVATE : 0;
}

/* The owner of the java.util.concurrent lock the current thread (of TGID)
 * parks on, BLOCKER: its exclusiveOwnerThread's thread id (the host's),
 * or 0. Read for a kept chain only.
 * Any park blocker is read so (a condition's field there is no thread):
 * the owner counts only when its Thread's JavaThread leads back to it,
 * and user space only for a lock's row. */
static __always_inline __u32 java_owner(__u64 blocker, __u32 tgid)
{
    struct pt_jvm_layout *l = bpf_map_lookup_elem(&jvm_layouts, &tgid);
    if (!l || !l->aos_owner || !l->eetop || !blocker)
        return 0;
    __u64 owner = heap_ref(blocker + l->aos_owner, l->compressed_oops, l->oop_base, l->oop_shift), jt = 0;
    if (!owner || bpf_probe_read_user(&jt, sizeof(jt), (void *)(owner + l->eetop)))
        return 0;
    return javathread_tid(l, jt, owner);
}

/* The owner of the monitor the current thread (of TGID, record W) is
 * entering: its ObjectMonitor's _owner, where that is a JavaThread. While
 * the monitor's first owner still holds it as a stack lock, _owner is
 * that lock's address on its stack, which leads to no Thread: 0, and the
 * thread that wakes this one there stands in (stand_in). */
static __always_inline __u32 monitor_owner(const struct pt_wait *w, __u32 tgid)
{
    struct pt_jvm_layout *l = bpf_map_lookup_elem(&jvm_layouts, &tgid);
    __u64 jt = w->park.jt, mon = 0, owner = 0;
    if (!l || !l->monitor_owner || !l->eetop || !jt || !w->park.pending_monitor ||
        bpf_probe_read_user(&mon, sizeof(mon), (void *)(jt + w->park.pending_monitor)) || !mon ||
        bpf_probe_read_user(&owner, sizeof(owner), (void *)(mon + l->monitor_owner)))
        return 0;
    return javathread_tid(l, owner, 0);
}

/* The owner a Java blocker S records for the wait of record W by the
 * current thread (of TGID): a java.util.concurrent lock's (unless user
 * space found it records none), a monitor's; 0 for any other. */
static __always_inline __u32 java_lock_owner(const struct pt_wait *w, const struct pt_slot *s, __u32 tgid)
{
    if (s->key.kind == PT_KIND_JVM_PARK && !(s->chain_flags & PT_SLOT_NO_OWNER))
        return java_owner(s->key.addr, tgid);
    if (s->key.kind == PT_KIND_JVM_MONITOR)
        return monitor_owner(w, tgid);
    return 0;
}

/* Reads into K the chain of thread TID's (of TGID) wait on SLOT, whose
 * holder is HOLDER. SELF: the thread being switched (0: none), which
 * stands SELF_END unless it waits (its on_cpu and state are in motion).
 * WAITER: nonzero, each holder's record is told to re-read this chain
 * (WAITER's) at its switches (chain_watch). */
/* Where a chain is read from: see chain_read. */
struct chain_from {
    __u32 tid, tgid, slot, holder, waker, self, self_end, waiter;
};

/* Who a wait on SLOT by the thread of record W waits for, when its
 * blocker records no owner: the thread that woke it there the last two
 * times (PT_WAKER_SWITCHED: the last one was not the one before). */
static __always_inline __u32 stand_in(const struct pt_wait *w, __u32 slot)
{
    for (int i = 0; i < 4; i++) {
        if (w->waker_slot[i] == slot + 1) {
            __u32 tid = w->waker_tid[i];
            return tid & PT_WAKER_SWITCHED ? 0 : tid;
        }
    }
    return 0;
}

/* A link's holder, acquired: its lock's recorded OWNER where that is a
 * live thread (of the process TGID, for a private futex), else WAKER,
 * the thread that last woke it there (*VIA set); NULL: neither. */
static __always_inline struct task_struct *link_holder(__u32 owner, __u32 waker, __u32 tgid, bool *via)
{
    __u32 h = owner & ~PT_HOLDER_PRIVATE;
    if (h) {
        struct task_struct *t = bpf_task_from_pid(h);
        if (t) {
            if (!(owner & PT_HOLDER_PRIVATE) || t->tgid == tgid) {
                *via = false;
                return t;
            }
            bpf_task_release(t);     /* not this process's thread: that futex is no mutex */
        }
    }
    *via = true;
    return waker ? bpf_task_from_pid(waker) : NULL;
}

/* A global function: the verifier walks it once, on its own, instead of
 * once per path into each of its call sites (inlined, --stacks all passed
 * its million-instruction bound; a static subprogram took 0.7 s of CPU to
 * load). */
__noinline int chain_read(struct pt_chain_key *k, const struct chain_from *f)
{
    if (!k || !f)
        return 0;
    __u32 tid = f->tid, tgid = f->tgid, slot = f->slot, holder = f->holder, waker = f->waker, self = f->self,
          self_end = f->self_end, waiter = f->waiter;
    __builtin_memset(k, 0, sizeof(*k));
    k->tid[0] = tid;
    k->tgid[0] = tgid;
    k->slot[0] = slot + 1;
    k->end = PT_CHAIN_UNKNOWN;
    for (int i = 1; i <= PT_CHAIN_DEPTH; i++) {
        bool via;
        struct task_struct *t = link_holder(holder, waker, k->tgid[i - 1], &via);
        if (!t)
            return 0;
        __u32 h = t->pid, htgid = t->tgid;
        k->via_waker |= (__u32)via << (i - 1);
        for (int j = 0; j < i; j++) {
            if (k->tid[j] == h) {
                bpf_task_release(t);
                k->end = PT_CHAIN_CYCLE;
                k->cycle_to = j;
                return 0;
            }
        }
        k->tid[i] = h;
        k->tgid[i] = htgid;
        k->depth = i;
        if (waiter)
            chain_name(t, h);
        struct pt_wait *hw = bpf_task_storage_get(&waits, t, 0, waiter ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
        if (hw && waiter)
            chain_watch(hw, waiter);
        if (hw && (hw->flags & PT_WAIT_ACTIVE)) {
            k->slot[i] = hw->slot + 1;
            holder = hw->holder;
            waker = stand_in(hw, hw->slot);
            bpf_task_release(t);
            continue;   /* past PT_CHAIN_DEPTH: unknown, waiting deeper */
        }
        k->end = h == self ? self_end : task_stand(t);
        if (k->end == PT_CHAIN_IO)
            k->end_kstack = io_kstack_of(t, hw);
        bpf_task_release(t);
        return 0;
    }
    return 0;
}

/* A word of K that changes when any of it does (a collision only
 * miscounts a wait). */
static __always_inline __u32 chain_digest(const struct pt_chain_key *k)
{
    __u32 d = k->depth * 31 + k->end;
    for (int i = 0; i <= PT_CHAIN_DEPTH; i++)
        d = d * 131 + k->tid[i] * 7 + k->slot[i];
    return d;
}

/* Charges W's chain the time since it was last read, up to NOW, weighed
 * by its stack's odds (a chain is kept where the stack is: one stands for
 * 1/odds waits). */
static __always_inline void chain_charge(struct pt_wait *w, __u64 now)
{
    __u64 since = w->chain_since;
    if (now <= since)
        return;
    struct pt_chain_val *v = bpf_map_lookup_elem(&chain_time, &w->chain);
    if (!v) {
        struct pt_chain_val zero = {};
        bpf_map_update_elem(&chain_time, &w->chain, &zero, BPF_NOEXIST);
        v = bpf_map_lookup_elem(&chain_time, &w->chain);
        if (!v) {
            count_drop(PT_DROP_CHAINS);
            return;
        }
    }
    __u64 count, ns;
    weigh(w->odds, now - since, &count, &ns);
    __sync_fetch_and_add(&v->ns, ns);
    /* Counted once in each chain it gave time to, however often its
     * holder's state went back and forth (the last four kept). */
    __u32 d = chain_digest(&w->chain) | 1;
    if (w->chain_counted[0] != d && w->chain_counted[1] != d && w->chain_counted[2] != d &&
        w->chain_counted[3] != d) {
        __sync_fetch_and_add(&v->waits, count);
        w->chain_counted[3] = w->chain_counted[2];
        w->chain_counted[2] = w->chain_counted[1];
        w->chain_counted[1] = w->chain_counted[0];
        w->chain_counted[0] = d;
    }
    w->chain_since = now;
}

/* chain_begin's work, within the chains' budget. A global function, as
 * chain_read is: inlined into each program that takes a wait's stack, it
 * was walked once per path into it. */
__noinline int chain_open(struct pt_wait *w, __u32 tid, __u32 tgid, __u32 idx, __u64 now)
{
    if (!w)
        return 0;
    /* Idle housekeeping (a pool's worker waiting for work), as user space
     * found: no chain would be shown. */
    struct pt_slot *s = bpf_map_lookup_elem(&slots, &idx);
    if (!s || (s->chain_flags & PT_SLOT_NO_CHAIN))
        return 0;
    /* A java.util.concurrent lock's or a monitor's owner, read now that
     * the chain is kept. A lock that records its owner has no stand-in (a
     * Semaphore's is never set): user space would show none. */
    bool owner_recorded = s->key.kind == PT_KIND_JVM_PARK && !(s->chain_flags & PT_SLOT_NO_OWNER);
    __u32 waker = owner_recorded ? 0 : stand_in(w, idx);
    if ((s->key.kind & 0xff) != PT_KIND_FUTEX)     /* a futex's was read as its wait began */
        w->holder = java_lock_owner(w, s, tgid);
    if (!w->holder && !waker)
        return 0;
    struct chain_from f = {.tid = tid, .tgid = tgid, .slot = idx, .holder = w->holder, .waker = waker, .waiter = tid};
    chain_read(&w->chain, &f);
    if (!w->chain.depth)
        return 0;
    chain_name(bpf_get_current_task_btf(), tid);
    w->chain_since = now ? now : bpf_ktime_get_ns();
    __builtin_memset(w->chain_counted, 0, sizeof(w->chain_counted));
    w->chain_busy = 0;
    __sync_fetch_and_or(&w->flags, PT_WAIT_CHAIN);
    return 0;
}

/* Wait W of thread TID (of TGID) on slot IDX has kept its stack: its chain
 * is read and kept, from NOW, where its blocker's holder is known. */
static __always_inline void chain_begin(struct pt_wait *w, __u32 tid, __u32 tgid, __u32 idx, __u64 now)
{
    if (!trace_chains)
        return;
    __u64 t0 = bpf_ktime_get_ns();
    struct pt_budget *b = budget_of(&chain_budget, t0);
    if (budget_spent(b)) {
        b->refused++;   /* on the bucket: a counter of its own put the Java park over 512 bytes of stack */
        return;
    }
    chain_open(w, tid, tgid, idx, now ? now : t0);
    if (b)
        budget_charge(b, bpf_ktime_get_ns() - t0);
}

/* The current thread wakes the thread of record W from its wait: it
 * stands in for the holder of that thread's next wait there (written only
 * when it changes: the record's line is the waiter's). */
static __always_inline void note_last_waker(struct pt_wait *w)
{
    __u32 me = (__u32)bpf_get_current_pid_tgid(), slot = w->slot + 1, prev = 0;
    int at = 3;
    bool found = false;
    for (int i = 0; i < 4; i++) {
        if (w->waker_slot[i] == slot) {
            at = i;
            found = true;
            break;
        }
    }
    if (found)
        prev = w->waker_tid[at & 3];
    /* A blocker whose waiter one thread wakes, then another (a thread's
     * own semaphore that every lock of a program wakes it on, as
     * PostgreSQL's backends have), names no holder by its last waker:
     * one stands in once it woke the waiter there twice in a row. */
    __u32 mark = !found || (prev & ~PT_WAKER_SWITCHED) != me ? PT_WAKER_SWITCHED : 0;
    if (at == 0 && prev == (me | mark))
        return;
    for (int i = 3; i > 0; i--) {
        if (i <= at) {
            w->waker_slot[i] = w->waker_slot[i - 1];
            w->waker_tid[i] = w->waker_tid[i - 1];
        }
    }
    w->waker_slot[0] = slot;
    w->waker_tid[0] = me | mark;
}

/* W's wait, which kept its chain, ends at NOW: its last part is charged. */
static __always_inline void chain_end(struct pt_wait *w, __u64 now)
{
    if (__sync_val_compare_and_swap(&w->chain_busy, 0, 1)) {
        count_drop(PT_DROP_CHAINS);     /* its first holder is re-reading it right now */
        return;
    }
    chain_charge(w, now);
    w->chain_busy = 0;
}

/* The holder of the wait of record W (of process TGID) now: a lock
 * changes hands while its waiters wait (its owner lets go, and another
 * waiter takes it). Read again only from a thread of the same process
 * (its address space is the current one), for a private futex, a Java
 * lock or a monitor, and only where one was read as the wait began; the
 * one read then where none is read now (the lock between two owners). */
static __always_inline __u32 holder_now(struct pt_wait *w, __u32 tgid)
{
    __u32 old = w->holder, now = 0;
    struct task_struct *cur = bpf_get_current_task_btf();
    struct pt_slot *s = old && cur->tgid == tgid ? bpf_map_lookup_elem(&slots, &w->slot) : NULL;
    if (!s)
        return old;
    if (s->key.kind == PT_KIND_FUTEX) {
        now = futex_owner(cur, s->key.addr);
        now = now ? now | PT_HOLDER_PRIVATE : 0;
    } else {
        now = java_lock_owner(w, s, tgid);
    }
    if (!now)
        return old;
    w->holder = now;
    return now;
}

/* Whether SELF is a holder in chain K. */
static __always_inline bool chain_through(const struct pt_chain_key *k, __u32 self)
{
    for (__u32 i = 1; i <= PT_CHAIN_DEPTH; i++) {
        if (i <= k->depth && k->tid[i] == self)
            return true;
    }
    return false;
}

/* Waiter WT's chain, which went through SELF (switched at NOW, standing
 * SELF_END unless it waits), charged up to now and read again; false when
 * that wait is over or no longer goes through SELF. */
__noinline int chain_reread(__u32 wt, __u32 self, __u32 self_end, __u64 now)
{
    struct task_struct *t = bpf_task_from_pid(wt);
    if (!t)
        return false;
    bool live = false;
    struct pt_wait *ww = bpf_task_storage_get(&waits, t, 0, 0);
    if (ww && (ww->flags & (PT_WAIT_ACTIVE | PT_WAIT_CHAIN)) == (PT_WAIT_ACTIVE | PT_WAIT_CHAIN) &&
        chain_through(&ww->chain, self)) {
        live = true;
        if (!__sync_val_compare_and_swap(&ww->chain_busy, 0, 1)) {
            chain_charge(ww, now);
            __u32 slot = ww->chain.slot[0] - 1;
            struct chain_from f = {.tid = wt, .tgid = ww->chain.tgid[0], .slot = slot,
                                   .holder = holder_now(ww, ww->chain.tgid[0]),
                                   .waker = stand_in(ww, slot), .self = self, .self_end = self_end, .waiter = wt};
            chain_read(&ww->chain, &f);
            ww->chain_busy = 0;
        }
    }
    bpf_task_release(t);
    return live;
}

/* A holder running again, or preempted, re-reads its chains at most this
 * often; one that goes to sleep, to I/O or to a wait of its own (the
 * chain grows a link, or closes a cycle) always does: a pool's workers,
 * each the holder of another's short waits, switch tens of thousands of
 * times a second (re-read at every switch, chains cost the bench's pool
 * about 110 ns a BPF run, 30%). Only a holder's own state is known here,
 * not what each chain last read of it, so a sleep is never skipped. */
#define PT_CHAIN_REREAD_NS 500000ull

/* Thread SELF, whose record is HW, is switched at NOW (0: not read yet)
 * and stands SELF_END (unless it waits): the chains that go through it
 * are charged up to now and read again. */
static __always_inline void chain_holder_moved(struct pt_wait *hw, __u32 self, __u32 self_end, __u64 now)
{
    bool fresh = !now;
    if (fresh)
        now = bpf_ktime_get_ns();
    bool stops = (hw->flags & PT_WAIT_ACTIVE) || self_end == PT_CHAIN_SLEEPING || self_end == PT_CHAIN_IO;
    if (!stops && now - hw->chain_reread_ns < PT_CHAIN_REREAD_NS)
        return;
    hw->chain_reread_ns = now;
    /* Within the chains' budget, as their first reading is: spent, the
     * chains stand as last read. Charged from here (a NOW the switch read
     * earlier would charge the switch's other work). */
    __u64 t0 = fresh ? now : bpf_ktime_get_ns();
    struct pt_budget *b = budget_of(&chain_budget, t0);
    if (budget_spent(b))
        return;
    __u32 left = 0;
    for (__u32 j = 0; j < PT_CHAIN_WAITERS; j++) {
        __u32 wt = hw->chain_waiters[j];
        if (!wt)
            continue;
        if (chain_reread(wt, self, self_end, now))
            left++;
        else
            hw->chain_waiters[j] = 0;
    }
    if (!left)
        hw->chain_waiter = 0;
    if (b)
        budget_charge(b, bpf_ktime_get_ns() - t0);
}

#endif
