// SPDX-License-Identifier: GPL-2.0
/* parktrace kernel side: times futex waits and aggregates them per blocker.
 * Nothing is streamed; user space reads the maps each measurement interval. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "parktrace.h"

char LICENSE[] SEC("license") = "GPL";

#define EAGAIN 11
#define ETIMEDOUT 110
#define VM_SHARED 0x8
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_CMD(op) ((op) & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))
#define FUTEX_WAIT 0
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2 13
#define FUTEX2_PRIVATE 128

/* Set by the loader before load. */
const volatile bool filter_tgids = false;
const volatile __u32 self_tgid = 0;
const volatile __u64 threshold = 0;
const volatile __u32 max_slots = 1;
const volatile bool trace_futex = true;      /* --kinds */
const volatile bool trace_jvm_park = true;
const volatile bool park_uprobes = false;    /* --probes uprobes: parks timed at Unsafe_Park */
const volatile bool trace_jvm_monitor = true;
const volatile bool trace_jvm_wait = true;
const volatile bool trace_java = true;       /* any of the three Java kinds */
const volatile bool follow_children = false; /* -- COMMAND: trace its descendants */
const volatile bool cfi_unwind = true;       /* --unwind cfi: stacks from DWARF rows */

/* Shared with user space through the skeleton's mmap of .bss/.data. */
__u64 next_slot = 0;
__u64 drops[PT_DROP_COUNT];
__u32 window_gen = 1;
__u64 window_start_ns = 0;   /* when user space last started a window */

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(max_entries, 1);           /* resized by the loader */
    __type(key, __u32);
    __type(value, struct pt_slot);
} slots SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1);           /* resized by the loader */
    __type(key, struct pt_blocker_key);
    __type(value, __u32);
} slot_index SEC(".maps");

/* Task-local: a plain store per wait, no hashing on the hot path. */
struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct pt_wait);
} waits SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 65536);
    __type(key, struct pt_thread_key);
    __type(value, __u32);
} thread_seen SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_STACK_TRACE);
    __uint(max_entries, 16384);
    __type(key, __u32);
    __uint(value_size, PT_MAX_FRAMES * sizeof(__u64));
} stacks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 65536);
    __type(key, struct pt_stack_key);
    __type(value, struct pt_stack_val);
} stack_time SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 65536);
    __type(key, struct pt_waker_key);
    __type(value, struct pt_stack_val);
} waker_time SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, 2048);
    __type(key, struct pt_sample_key);
    __type(value, struct pt_sample);
} samples SEC(".maps");

/* Wakes user space when a new sample waits, so it is unwound and its Java
 * frames named while the process lives (a JVM can exit before the next
 * tick). Only new stacks post here; a full ring loses nothing, the sample
 * stays in `samples` for the next tick. */
struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 65536);     /* a JVM's burst of new stacks at start-up */
} sample_ready SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct pt_sample);
} sample_scratch SEC(".maps");

/* JVMs (tgid -> layout) and their threads (tid -> JavaThread*), kept by
 * user space, which finds JVMs and walks their thread lists. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1024);
    __type(key, __u32);
    __type(value, struct pt_jvm_layout);
} jvm_layouts SEC(".maps");

/* LRU: threads BPF learns itself (from park futexes, thread starts) are
 * not in user space's lists, so a user's fake JVMs could fill a plain hash
 * for good; the least recently used entry goes instead, and user space puts
 * back a live JVM's thread at its next refresh. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 65536);
    __type(key, __u32);
    __type(value, __u64);
} java_threads SEC(".maps");

/* Processes to trace when filtering; fork-following adds children. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 8192);
    __type(key, __u32);
    __type(value, __u8);
} traced SEC(".maps");

static __always_inline void count_drop(int which)
{
    __sync_fetch_and_add(&drops[which], 1);
}

static __always_inline bool tgid_traced(__u32 tgid)
{
    if (tgid == self_tgid)
        return false;
    if (!filter_tgids)
        return true;
    return bpf_map_lookup_elem(&traced, &tgid) != NULL;
}

static __always_inline void raise_max(__u64 *p, __u64 v)
{
    for (int i = 0; i < 4; i++) {
        __u64 cur = *(volatile __u64 *)p;
        if (v <= cur || __sync_val_compare_and_swap(p, cur, v) == cur)
            return;
    }
}

static __always_inline __u32 log2_slot(__u64 v)
{
    __u32 r = 0, s;
    s = (v > 0xFFFFFFFFULL) << 5; v >>= s; r |= s;
    s = (v > 0xFFFF) << 4; v >>= s; r |= s;
    s = (v > 0xFF) << 3; v >>= s; r |= s;
    s = (v > 0xF) << 2; v >>= s; r |= s;
    s = (v > 0x3) << 1; v >>= s; r |= s;
    r |= (v >> 1);
    return r < PT_HIST_SLOTS ? r : PT_HIST_SLOTS - 1;
}

struct vma_ctx {
    __u64 uaddr;
    struct pt_blocker_key *key;
};

/* Shared futexes in MAP_SHARED file or shmem mappings meet on (dev, inode,
 * offset), the way the kernel keys them. */
static long shared_key_cb(struct task_struct *task, struct vm_area_struct *vma,
                          struct vma_ctx *c)
{
    struct file *f = BPF_CORE_READ(vma, vm_file);
    if (!f || !(BPF_CORE_READ(vma, vm_flags) & VM_SHARED))
        return 0;
    struct inode *ino = BPF_CORE_READ(f, f_inode);
    c->key->addr = (BPF_CORE_READ(vma, vm_pgoff) << 12) +
                   (c->uaddr - BPF_CORE_READ(vma, vm_start));
    c->key->ino = BPF_CORE_READ(ino, i_ino);
    c->key->owner = BPF_CORE_READ(ino, i_sb, s_dev);
    c->key->kind = PT_KIND_FUTEX | PT_KEY_SHARED;
    return 0;
}

static __always_inline void futex_key(struct pt_blocker_key *key, __u64 uaddr,
                                      __u32 tgid, bool private)
{
    key->addr = uaddr;
    key->ino = 0;
    key->owner = tgid;
    key->kind = PT_KIND_FUTEX;
    if (!private) {
        struct vma_ctx c = { .uaddr = uaddr, .key = key };
        bpf_find_vma(bpf_get_current_task_btf(), uaddr, shared_key_cb, &c, 0);
    }
}

/* Finds the blocker's slot, creating it on the first wait. */
static __always_inline struct pt_slot *slot_get(struct pt_blocker_key *key, __u32 *idx_out,
                                                __u64 uaddr, __u64 pid_tgid, __u64 now)
{
    __u32 *idxp = bpf_map_lookup_elem(&slot_index, key);
    __u32 idx;

    if (idxp) {
        idx = *idxp;
    } else {
        __u64 n = __sync_fetch_and_add(&next_slot, 1);
        if (n >= max_slots) {
            count_drop(PT_DROP_BLOCKERS);
            return NULL;
        }
        idx = n;
        struct pt_slot *s = bpf_map_lookup_elem(&slots, &idx);
        if (!s)
            return NULL;
        s->key = *key;
        s->first_tid = (__u32)pid_tgid;
        s->first_tgid = pid_tgid >> 32;
        s->first_stack = -1;
        s->first_uaddr = uaddr;
        s->first_ts = now;
        bpf_get_current_comm(s->first_comm, sizeof(s->first_comm));
        if (bpf_map_update_elem(&slot_index, key, &idx, BPF_NOEXIST)) {
            /* Another CPU won the race (or the index is full); this slot
             * stays invalid and unused. */
            idxp = bpf_map_lookup_elem(&slot_index, key);
            if (!idxp) {
                count_drop(PT_DROP_BLOCKERS);
                return NULL;
            }
            idx = *idxp;
        } else {
            s->valid = 1;
        }
    }
    *idx_out = idx;
    return bpf_map_lookup_elem(&slots, &idx);
}

/* Counts the thread once per window and once per run. A wait that began
 * before the window was already counted when user space opened it. LIVE,
 * the thread's own record, remembers the last (slot, window) counted, so a
 * thread waiting on one blocker again and again skips the hash lookup. */
static __always_inline void note_thread(struct pt_slot *s, __u32 idx, __u32 tid, __u64 start,
                                        struct pt_wait *live)
{
    struct pt_thread_key tk = { .slot = idx, .tid = tid };
    __u32 gen = window_gen;
    bool in_window = start >= window_start_ns;

    if (live->counted_slot == idx + 1 && live->counted_gen == gen)
        return;
    live->counted_slot = idx + 1;
    live->counted_gen = gen;
    __u32 *seen = bpf_map_lookup_elem(&thread_seen, &tk);
    if (seen) {
        if (*seen != gen) {
            *seen = gen;
            if (in_window)
                __sync_fetch_and_add(&s->threads_win, 1);
        }
        return;
    }
    long err = bpf_map_update_elem(&thread_seen, &tk, &gen, BPF_NOEXIST);
    if (!err) {
        __sync_fetch_and_add(&s->threads, 1);
        if (in_window)
            __sync_fetch_and_add(&s->threads_win, 1);
    } else if (err != -17 /* EEXIST */) {
        live->counted_slot = 0;
        count_drop(PT_DROP_THREADS);
    }
}

/* Copies the user stack once per (blocker, process, stack id) for CFI unwinding in
 * user space. Reads in chunks so a stack shorter than the copy still fits. */
static __always_inline void take_sample(__u32 idx, __u32 tgid, __u32 tid, __s32 stack_id)
{
    struct pt_sample_key k = { .slot = idx, .tgid = tgid, .stack_id = stack_id };
    __u32 zero = 0;

    if (bpf_map_lookup_elem(&samples, &k))
        return;
    struct pt_sample *smp = bpf_map_lookup_elem(&sample_scratch, &zero);
    if (!smp)
        return;
    struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
    smp->ip = BPF_CORE_READ(regs, ip);
    smp->sp = BPF_CORE_READ(regs, sp);
    smp->bp = BPF_CORE_READ(regs, bp);
    smp->tid = tid;
    smp->len = 0;
    for (int i = 0; i < PT_STACK_SAMPLE / PT_STACK_CHUNK; i++) {
        if (bpf_probe_read_user(smp->data + i * PT_STACK_CHUNK, PT_STACK_CHUNK,
                                (void *)(smp->sp + i * PT_STACK_CHUNK)))
            break;
        smp->len += PT_STACK_CHUNK;
    }
    long err = bpf_map_update_elem(&samples, &k, smp, BPF_NOEXIST);
    if (!err) {
        struct pt_ready ev = { .what = PT_READY_SAMPLE, .tgid = tgid };
        bpf_ringbuf_output(&sample_ready, &ev, sizeof(ev), 0);
    }
    else if (err != -17)
        count_drop(PT_DROP_SAMPLES);
}

static __always_inline void note_stack(__u32 idx, __s32 stack_id, __u64 pid_tgid)
{
    struct pt_stack_key k = { .slot = idx, .stack_id = stack_id, .tgid = pid_tgid >> 32 };
    struct pt_stack_val zero = {};

    if (stack_id < 0 || bpf_map_lookup_elem(&stack_time, &k))
        return;
    long err = bpf_map_update_elem(&stack_time, &k, &zero, BPF_NOEXIST);
    if (!err) {
        if (!(stack_id & PT_USTACK_ID))    /* kernel-unwound stacks need no copy */
            take_sample(idx, pid_tgid >> 32, (__u32)pid_tgid, stack_id);
    } else if (err != -17)
        count_drop(PT_DROP_STACKAGG);
}

/* Leaves a wait: drops parked_now and closes the busy period if it was the
 * last waiter. `discard` is for calls that turned out not to sleep. */
static __always_inline void leave_wait(struct pt_slot *s, const struct pt_wait *w, __u64 now,
                                       bool discard)
{
    __u64 busy_start = s->busy_start;
    __sync_fetch_and_add(&s->start_sum, -w->start_ns);
    __s64 old = __sync_fetch_and_add(&s->parked_now, -1);
    __u32 flags = w->flags;

    if (old == 1 && !(discard && (flags & PT_WAIT_OPENED_BUSY)))
        __sync_fetch_and_add(&s->real_ns, now - busy_start);
}

/* A value check: the kernel sleeps only while the word holds VAL. */
static __always_inline bool word_matches(__u64 uaddr, __u32 val)
{
    __u32 cur;
    return !bpf_probe_read_user(&cur, sizeof(cur), (void *)uaddr) && cur == val;
}

static __always_inline void note_events(struct pt_slot *s, __u64 first, __u64 last)
{
    if (!s->first_ts)
        __sync_val_compare_and_swap(&s->first_ts, 0, first);
    if (!s->win_first_ts)
        __sync_val_compare_and_swap(&s->win_first_ts, 0, first);
    s->last_ts = last;
}

/* ---- The accounting both probe modes share ---------------------------- */

/* A wait has begun on slot S: only the live part, ParkedNow and the busy
 * period. Begun waits are completed ones plus those in progress, so no
 * separate count is kept unless --threshold needs one. */
static __always_inline void wait_start(struct pt_slot *s, __u32 idx, struct pt_wait *w, __u64 now)
{
    w->start_ns = now;
    w->slot = idx;
    w->flags = PT_WAIT_ACTIVE;
    w->concurrency = 0;
    w->stack_id = -1;
    w->waker_stack = -1;
    w->end = PT_END_WOKEN;
    if (!threshold || __sync_fetch_and_add(&s->attempts, 1) >= threshold) {
        w->flags |= PT_WAIT_TIMED;
        __sync_fetch_and_add(&s->start_sum, now);
        __s64 old = __sync_fetch_and_add(&s->parked_now, 1);
        if (old == 0) {
            s->busy_start = now;
            w->flags |= PT_WAIT_OPENED_BUSY;
        }
        w->concurrency = old + 1;
    }
}

/* Undoes a wait that did not sleep after all. */
static __always_inline void drop_wait(struct pt_slot *s, struct pt_wait *w, __u64 now)
{
    if (threshold)
        __sync_fetch_and_add(&s->attempts, -1);
    if (w->flags & PT_WAIT_TIMED)
        leave_wait(s, w, now, true);
    w->flags = 0;
}

/* A record still active when its thread starts another wait, or exits,
 * lost its end: a task-storage lookup can fail while another CPU user holds
 * the storage's per-CPU lock. Its time is dropped and counted, never left
 * to run on as a waiter that does not exist. */
static __always_inline void reclaim_stale(struct pt_wait *w, __u64 now)
{
    if (!(w->flags & PT_WAIT_ACTIVE))
        return;
    struct pt_slot *s = bpf_map_lookup_elem(&slots, &w->slot);
    if (s)
        drop_wait(s, w, now);
    w->flags = 0;
    count_drop(PT_DROP_WAITING);
}

#include "unwind.bpf.h"

/* The current thread's user stack id, from the cache when its user ip and
 * sp are those of the last walk: the same instruction at the same stack
 * depth (and, for a kernel-unwound stack, the same return addresses at two
 * depths). rbp is no part of the key: code without frame pointers (libc)
 * leaves anything in it. Kernel-unwound (CFI) stacks first; the kernel's
 * frame-pointer walk for processes without tables. */
static __always_inline __s32 cached_stackid(void *ctx, struct pt_stack_cache *c, struct pt_regs *regs)
{
    __u64 ip = BPF_CORE_READ(regs, ip), sp = BPF_CORE_READ(regs, sp);
    if (c->ip == ip && c->sp == sp && ip && ustack_cache_holds(c))
        return c->sid;
    for (int j = 0; j < PT_CACHE_CHECKS; j++)
        c->chk_addr[j] = 0;
    __s32 sid = cfi_unwind ? unwind_user(ip, sp, BPF_CORE_READ(regs, bp), c) : UNWIND_BY_FP;
    if (sid == UNWIND_FAILED) {
        count_drop(PT_DROP_STACKS);
        c->ip = 0;
        return -1;
    }
    bool keep = sid != UNWIND_LATER;
    if (sid < 0) {
        sid = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
        if (sid < 0) {
            count_drop(PT_DROP_STACKS);
            return sid;
        }
    }
    c->ip = keep ? ip : 0;
    c->sp = sp;
    c->sid = sid;
    c->noted_slot = 0;
    return sid;
}

/* Takes the waiter's user stack; only valid while the waiter is current.
 * W is its own record; REGS its user registers as the stack walk sees them. */
static __always_inline __s32 waiter_stack(void *ctx, __u32 idx, __u64 pid_tgid, struct pt_wait *w,
                                          struct pt_regs *regs)
{
    __s32 sid = cached_stackid(ctx, &w->wait_st, regs);
    if (sid >= 0 && w->wait_st.noted_slot != idx + 1) {
        note_stack(idx, sid, pid_tgid);
        w->wait_st.noted_slot = idx + 1;
    }
    return sid;
}

static __always_inline struct pt_regs *user_regs(void)
{
    return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

/* Adds one wait of D ns to a per-stack entry. */
static __always_inline void add_stack_time(struct pt_stack_val *sv, __u64 d)
{
    __sync_fetch_and_add(&sv->count, 1);
    __sync_fetch_and_add(&sv->ns, d);
}

/* A wait that slept has ended: everything but the live part is done here.
 * W is the wait (a copy: the live record may already be reused), LIVE the
 * thread's record. A wait with a known waker is charged to its (waiter
 * stack, waker stack) entry only; user space adds those to the waiter
 * stack's own line, which keeps the rest. */
static __always_inline void wait_finish(struct pt_slot *s, const struct pt_wait *w, struct pt_wait *live,
                                        __u64 now, __u32 end, __u32 tid, __u32 tgid)
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
    leave_wait(s, w, now, false);

    if (w->stack_id >= 0 && s->first_stack < 0 && tid == s->first_tid)
        s->first_stack = w->stack_id;
    note_thread(s, w->slot, tid, w->start_ns, live);
    struct pt_stack_val *sv;
    if (w->waker_stack >= 0 && end == PT_END_WOKEN) {
        struct pt_waker_key wk = { .slot = w->slot, .stack_id = w->stack_id, .tgid = tgid,
                                   .waker_stack = w->waker_stack, .waker_tgid = w->waker_tgid };
        sv = bpf_map_lookup_elem(&waker_time, &wk);
        if (!sv) {
            /* --probes uprobes makes its entries here, the first time. */
            struct pt_stack_val zero = {};
            if (bpf_map_update_elem(&waker_time, &wk, &zero, BPF_NOEXIST) == 0)
                sv = bpf_map_lookup_elem(&waker_time, &wk);
            else
                count_drop(PT_DROP_STACKAGG);
        }
        if (sv) {
            add_stack_time(sv, d);
            return;
        }
        /* No waker entry could be made (counted): the waiter's own line. */
    }
    struct pt_stack_key sk = { .slot = w->slot, .stack_id = w->stack_id, .tgid = tgid };
    sv = bpf_map_lookup_elem(&stack_time, &sk);
    if (sv)
        add_stack_time(sv, d);
}

static __always_inline bool futex_wait_op(int op)
{
    return op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET || op == FUTEX_WAIT_REQUEUE_PI ||
           op == FUTEX_LOCK_PI || op == FUTEX_LOCK_PI2;
}

/* Finds or creates the slot of the futex at UADDR for the current task. */
static __always_inline struct pt_slot *futex_slot(__u64 uaddr, bool private, __u64 pid_tgid,
                                                  __u64 now, __u32 *idx)
{
    struct pt_blocker_key key;
    futex_key(&key, uaddr, pid_tgid >> 32, private);
    return slot_get(&key, idx, uaddr, pid_tgid, now);
}

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

/* Reads a reference field of a Java object: narrow when oops are compressed. */
static __always_inline __u64 java_ref(const struct pt_jvm_layout *l, __u64 addr)
{
    if (l->compressed_oops) {
        __u32 narrow = 0;
        bpf_probe_read_user(&narrow, sizeof(narrow), (void *)addr);
        return narrow ? l->oop_base + ((__u64)narrow << l->oop_shift) : 0;
    }
    __u64 oop = 0;
    bpf_probe_read_user(&oop, sizeof(oop), (void *)addr);
    return oop;
}

static __always_inline void learn_park_offset(struct pt_jvm_layout *l, __u64 off)
{
    for (int i = 0; i < PT_PARK_OFFS; i++) {
        __u64 known = l->park_offs[i];
        if (known == off)
            return;
        if (!known) {
            l->park_offs[i] = off;
            return;
        }
    }
}

/* The JavaThread whose Parker holds futex UADDR, for a thread user space
 * has not listed yet (it started since the last refresh): a candidate at a
 * learnt offset counts only if its OSThread names this very thread. */
static __always_inline __u64 javathread_of(const struct pt_jvm_layout *l, __u64 uaddr, __u32 tid)
{
    for (int i = 0; i < PT_PARK_OFFS; i++) {
        __u64 off = l->park_offs[i], osthread = 0;
        __s32 os_tid = 0;
        if (!off || off > uaddr)
            break;
        __u64 jt = uaddr - off;
        if (bpf_probe_read_user(&osthread, sizeof(osthread), (void *)(jt + l->osthread)) || !osthread ||
            bpf_probe_read_user(&os_tid, sizeof(os_tid), (void *)(osthread + l->os_tid)))
            continue;
        if ((__u32)os_tid == tid)
            return jt;
    }
    return 0;
}

static __always_inline void park_blocker_key(const struct pt_jvm_layout *l, __u64 jt, __u32 tgid,
                                             struct pt_blocker_key *key);

static __always_inline __u64 object_klass(const struct pt_jvm_layout *l, __u64 obj)
{
    __u64 klass = 0;
    if (l->compressed_klass) {
        __u32 narrow = 0;
        bpf_probe_read_user(&narrow, sizeof(narrow), (void *)(obj + l->klass));
        return narrow ? l->klass_base + ((__u64)narrow << l->klass_shift) : 0;
    }
    bpf_probe_read_user(&klass, sizeof(klass), (void *)(obj + l->klass));
    return klass;
}

/* A Java blocker's class, read once, when its slot has none yet (the
 * object is the key's address; Java keys are owned by their tgid). */
static __always_inline void note_klass(struct pt_slot *s, const struct pt_blocker_key *key)
{
    if (s->klass || !key->addr || (key->kind & 0xff) == PT_KIND_FUTEX)
        return;
    struct pt_jvm_layout *l = bpf_map_lookup_elem(&jvm_layouts, &key->owner);
    if (l)
        s->klass = object_klass(l, key->addr);
}

/* A Java thread sleeping outside its Parker but with a monitor pending is
 * entering a contended `synchronized` (jvm-monitor); with a monitor it waits
 * on, it is in Object.wait (jvm-wait). Either is keyed by the monitor's object. */
static __always_inline bool monitor_key(const struct pt_jvm_layout *l, __u64 jt, __u32 tgid,
                                        struct pt_blocker_key *key)
{
    __u64 mon = 0, handle = 0, obj = 0;
    __u32 kind = PT_KIND_JVM_MONITOR;
    if (!l->pending_monitor)
        return false;
    if (trace_jvm_monitor)
        bpf_probe_read_user(&mon, sizeof(mon), (void *)(jt + l->pending_monitor));
    if (!mon && trace_jvm_wait) {
        bpf_probe_read_user(&mon, sizeof(mon), (void *)(jt + l->waiting_monitor));
        kind = PT_KIND_JVM_WAIT;
    }
    if (!mon)
        return false;
    /* ObjectMonitor::_object is a weak handle: a pointer to the oop's slot. */
    bpf_probe_read_user(&handle, sizeof(handle), (void *)(mon + l->monitor_object));
    if (handle)
        bpf_probe_read_user(&obj, sizeof(obj), (void *)handle);
    if (!obj)
        return false;
    key->addr = obj;
    key->ino = 0;
    key->owner = tgid;
    key->kind = kind;
    return true;
}

/* A Java thread sleeping on the futex inside its own JavaThread (its
 * Parker) is parked: the wait is charged to (tgid, parkBlocker object),
 * never to the futex. The blocker's Klass* names its class later. Other
 * sleeps of a known Java thread may be monitor entries or Object.wait. */
static __always_inline bool java_wait_key(struct pt_blocker_key *key, __u64 uaddr,
                                          __u64 pid_tgid)
{
    __u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
    struct pt_jvm_layout *l = bpf_map_lookup_elem(&jvm_layouts, &tgid);
    if (!l)
        return false;
    bool parks = trace_jvm_park && !park_uprobes;
    __u64 jt, *known = bpf_map_lookup_elem(&java_threads, &tid);
    if (known) {
        jt = *known;
        if (uaddr < jt || uaddr >= jt + l->thread_size)
            return (trace_jvm_monitor || trace_jvm_wait) && monitor_key(l, jt, tgid, key);
        if (!parks)
            return false;
        learn_park_offset(l, uaddr - jt);
    } else {
        if (!parks)
            return false;
        jt = javathread_of(l, uaddr, tid);
        if (!jt)
            return false;
        bpf_map_update_elem(&java_threads, &tid, &jt, BPF_ANY);
    }
    park_blocker_key(l, jt, tgid, key);
    return true;
}

/* The key of JavaThread JT's current park: (tgid, its parkBlocker object). */
static __always_inline void park_blocker_key(const struct pt_jvm_layout *l, __u64 jt, __u32 tgid,
                                             struct pt_blocker_key *key)
{
    __u64 handle = 0, thread_oop = 0, blocker = 0;
    bpf_probe_read_user(&handle, sizeof(handle), (void *)(jt + l->thread_obj));
    if (handle)
        bpf_probe_read_user(&thread_oop, sizeof(thread_oop), (void *)handle);
    if (thread_oop)
        blocker = java_ref(l, thread_oop + l->park_blocker);
    /* A park without a blocker is one "<no blocker>" row per JVM. */
    key->addr = blocker;
    key->ino = 0;
    key->owner = tgid;
    key->kind = PT_KIND_JVM_PARK;
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

#define PF_KTHREAD 0x00200000
#define NR_FUTEX 202

/* The thread waking a waiter from its own FUTEX_WAKE (an unlock, a signal,
 * an Unsafe.unpark) is where the contention was caused: its stack is kept,
 * with a copy for unwinding the first time it is seen on this pair of stacks. */
static __always_inline void note_waker(void *ctx, struct pt_wait *w, __u32 waiter_tgid)
{
    struct task_struct *cur = bpf_get_current_task_btf();
    if ((cur->flags & PF_KTHREAD) || !(w->flags & PT_WAIT_TIMED))
        return;
    struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);
    if (BPF_CORE_READ(regs, orig_ax) != NR_FUTEX)
        return;
    struct pt_wait *mine = bpf_task_storage_get(&waits, cur, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!mine)
        return;
    __s32 sid = cached_stackid(ctx, &mine->wake_st, regs);
    if (sid < 0)
        return;
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    struct pt_waker_key k = { .slot = w->slot, .stack_id = w->stack_id, .tgid = waiter_tgid,
                              .waker_stack = sid, .waker_tgid = pid_tgid >> 32 };
    /* The same waiter stack on the same blocker as last time: the entry exists. */
    __u32 seen = w->slot + 1;
    if (mine->wake_st.noted_slot == seen && mine->wake_seen_stack == w->stack_id &&
        mine->wake_seen_tgid == waiter_tgid) {
        w->waker_stack = sid;
        w->waker_tgid = pid_tgid >> 32;
        return;
    }
    mine->wake_st.noted_slot = seen;
    mine->wake_seen_stack = w->stack_id;
    mine->wake_seen_tgid = waiter_tgid;
    if (!bpf_map_lookup_elem(&waker_time, &k)) {
        struct pt_stack_val zero = {};
        long err = bpf_map_update_elem(&waker_time, &k, &zero, BPF_NOEXIST);
        if (!err) {
            if (!(sid & PT_USTACK_ID))
                take_sample(w->slot, pid_tgid >> 32, (__u32)pid_tgid, sid);
        } else if (err != -17) {
            count_drop(PT_DROP_STACKAGG);
            return;
        }
    }
    w->waker_stack = sid;
    w->waker_tgid = pid_tgid >> 32;
}

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

/* ---- Probe mode "syscalls": waits timed at the futex system calls -------
 * Exact end kinds from the return value, at the price of a probe on every
 * futex call. Kept for kernels without BTF-enabled scheduler tracepoints
 * and for comparison in the benchmark. */

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
    wait_start(s, idx, w, now);
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
    struct pt_wait w = *wp;
    wp->flags = 0;
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    /* Still in the kernel: the user stack is as it was when it slept. */
    if (w.flags & PT_WAIT_TIMED)
        w.stack_id = waiter_stack(ctx, w.slot, pid_tgid, wp, user_regs());
    __u32 end = ret == -ETIMEDOUT ? PT_END_TIMEOUT : ret < 0 ? PT_END_INTERRUPTED : PT_END_WOKEN;
    wait_finish(s, &w, wp, now, end, (__u32)pid_tgid, pid_tgid >> 32);
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
        reclaim_stale(w, now);
    if (tid == tgid && cfi_unwind) {
        bpf_map_delete_elem(&unwind_procs, &tgid);
        bpf_map_delete_elem(&unwind_asked, &tgid);
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
    struct pt_slot *s = slot_get(&key, &idx, key.addr, pid_tgid, now);
    if (!s)
        return 0;
    note_klass(s, &key);
    wait_start(s, idx, w, now);
    w->flags |= PT_WAIT_UPROBE | (time ? PT_WAIT_PARK_TIMED : 0);
    w->nvcsw = task->nvcsw;
    if (w->flags & PT_WAIT_TIMED)
        w->stack_id = waiter_stack(ctx, idx, pid_tgid, w, ctx);
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
    struct pt_wait done = *w;
    w->flags = 0;
    /* Unparked: woken. Otherwise a timed park timed out, and an untimed one
     * was interrupted (Thread.interrupt unparks from inside the JVM). */
    __u32 end = waker.tgid ? PT_END_WOKEN : (done.flags & PT_WAIT_PARK_TIMED) ? PT_END_TIMEOUT
                                                                                : PT_END_INTERRUPTED;
    done.waker_stack = waker.stack_id;
    done.waker_tgid = waker.tgid;
    wait_finish(s, &done, w, now, end, tid, pid_tgid >> 32);
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
    struct pt_pending_waker pw = { .stack_id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK), .tgid = tgid };
    if (pw.stack_id >= 0) {
        struct pt_blocker_key key;
        park_blocker_key(l, jt, tgid, &key);
        __u32 *idx = bpf_map_lookup_elem(&slot_index, &key);
        if (idx)
            note_stack(*idx, pw.stack_id, pid_tgid);
    } else {
        count_drop(PT_DROP_STACKS);
    }
    bpf_map_update_elem(&pending_wakers, &tid, &pw, BPF_ANY);
    return 0;
}
