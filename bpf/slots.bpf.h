/* The blocker table and the accounting of waits, shared by every probe mode.
 * Included by parktrace.bpf.c, first.
 *
 * Owns: the globals user space reads through the skeleton (next_slot, drops,
 * window_gen, window_start_ns, lost_ends_recovered); the per-CPU counters
 * hot_counts (hot, HOT_ADD); the maps slots and slot_index (the blocker
 * table), free_ring with free_head and free_tail (slots user space recycled),
 * waits (each thread's wait record), thread_seen (distinct threads),
 * stack_time and waker_time (time per waiter stack, and per waiter and waker
 * stack; each slot's first entries of both are its own: own_entries.bpf.h),
 * traced (the PID filter); count_drop, tgid_traced, slot_get,
 * note_thread, and the accounting wait_start, drop_wait and reclaim_stale
 * (a wait's end: wait_end.bpf.h).
 *
 * Shared: waits with stacks.bpf.h (the waker's own record), the probe headers
 * and lifetimes.bpf.h; stack_time and waker_time get their entries from
 * stacks.bpf.h (note_stack, note_waker) and jvm_uprobes.bpf.h; slots and
 * slot_index with the probe headers; traced with lifetimes.bpf.h (children of
 * `-- COMMAND`). */
#ifndef PT_SLOTS_BPF_H
#define PT_SLOTS_BPF_H

/* Shared with user space through the skeleton's mmap of .bss/.data. */
__u64 next_slot = 0;
__u64 drops[PT_DROP_COUNT];
__u32 window_gen = 1;
/* Waits whose switch back in was never seen, ended from the CPU time their
 * thread has run since (--self-stats). */
__u64 lost_ends_recovered = 0;
__u64 window_start_ns = 0;   /* when user space last started a window */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct pt_hot_counts);
} hot_counts SEC(".maps");

/* This CPU's counters (per CPU, never NULL in practice). */
static __always_inline struct pt_hot_counts *hot(void)
{
    __u32 zero = 0;
    return bpf_map_lookup_elem(&hot_counts, &zero);
}

/* Bumps a counter of hot(): atomic, as programs can nest on one CPU. */
#define HOT_ADD(field, v)                                                \
    do {                                                                 \
        struct pt_hot_counts *h_ = hot();                                \
        if (h_)                                                          \
            __sync_fetch_and_add(&h_->field, (v));                       \
    } while (0)

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(max_entries, 1);           /* resized by the loader */
    __type(key, __u32);
    __type(value, struct pt_slot);
} slots SEC(".maps");

/* Its entries, like stack_time's and waker_time's, are allocated as they
 * are made: preallocated, the three hashes were 20 MiB of kernel memory
 * and a tenth of every start, however few blockers and stacks a run saw. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, 1);           /* resized by the loader */
    __type(key, struct pt_blocker_key);
    __type(value, __u32);
} slot_index SEC(".maps");

/* Slots user space has recycled (blockers idle for a while, their figures
 * kept in user space, their slots zeroed): a ring user space alone writes
 * through its mmap, entry free_head % max_slots next, and the programs
 * take from at free_tail by compare-and-swap. A queue map cost each new
 * blocker a locked pop (200 ns on H2, where most waits are on a new object)
 * and user space a system call for each slot it gave back. The ring holds
 * every slot at most once, so the head never laps the tail. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(max_entries, 1);           /* resized by the loader */
    __type(key, __u32);
    __type(value, __u64);             /* an array's values are 8 bytes apart */
} free_ring SEC(".maps");
__u64 free_head = 0;    /* slots given back so far (user space) */
__u64 free_tail = 0;    /* slots taken so far (the programs) */

/* Task-local: a plain store per wait, no hashing on the hot path. */
struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct pt_wait);
} waits SEC(".maps");

/* Least recently used (blocker, thread) pairs go when it is full: a dead
 * thread's pairs first, as nothing touches them again. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 65536);
    __type(key, struct pt_thread_key);
    __type(value, __u32);
} thread_seen SEC(".maps");

/* Time per (blocker, waiter stack), and per (blocker, waiter stack, waker
 * stack): entries made by stacks.bpf.h, charged by wait_finish. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, 65536);
    __type(key, struct pt_stack_key);
    __type(value, struct pt_stack_val);
} stack_time SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, 65536);
    __type(key, struct pt_waker_key);
    __type(value, struct pt_waker_val);
} waker_time SEC(".maps");

/* Processes to trace when filtering; fork-following adds children. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 8192);
    __type(key, __u32);
    __type(value, __u8);
} traced SEC(".maps");

/* --cgroup: the cgroups to trace, each with its descendants (cgroup v2
 * directories, as descriptors). */
struct {
    __uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
    __uint(max_entries, PT_MAX_CGROUPS);
    __type(key, __u32);
    __type(value, __u32);
} cgroup_filter SEC(".maps");

/* Whether the current task is in one of the --cgroup cgroups or below:
 * the kernel's ancestor check, so a cgroup made after the start is in. */
static __always_inline bool current_in_cgroups(void)
{
    for (__u32 i = 0; i < PT_MAX_CGROUPS && i < cgroup_filters; i++)
        if (bpf_current_task_under_cgroup(&cgroup_filter, i) == 1)
            return true;
    return false;
}

static __always_inline void count_drop(int which)
{
    __sync_fetch_and_add(&drops[which], 1);
}

static __always_inline bool tgid_traced(__u32 tgid)
{
    if (tgid == self_tgid)
        return false;
    /* Every caller asks about the current task's own process. */
    if (cgroup_filters && !current_in_cgroups())
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

/* 1 when V > C, else 0, for V and C below 2^63, with no branch: BPF has no
 * setcc, so a comparison's value is a branch, and the verifier walks both
 * ways. log2_slot's five made 32 paths, each with other bounds on the
 * duration, which every check after it then walked again: at every start,
 * tens of milliseconds of CPU. */
static __always_inline __u64 above(__u64 v, __u64 c)
{
    return (c - v) >> 63;
}

static __always_inline __u32 log2_slot(__u64 v)
{
    __u32 r = 0, s;
    s = above(v, 0xFFFFFFFFULL) << 5; v >>= s; r |= s;
    s = above(v, 0xFFFF) << 4; v >>= s; r |= s;
    s = above(v, 0xFF) << 3; v >>= s; r |= s;
    s = above(v, 0xF) << 2; v >>= s; r |= s;
    s = above(v, 0x3) << 1; v >>= s; r |= s;
    r |= (v >> 1);
    return r < PT_HIST_SLOTS ? r : PT_HIST_SLOTS - 1;
}

/* --self-stats times one run in PT_RUN_EVERY on each CPU, enough for the
 * tails (run_hist): two clock reads at every run were in the means that
 * the kernel's own run times give, 40-60 ns of a 500 ns run. 0: untimed. */
static __always_inline __u64 run_clock(void)
{
    if (!time_runs)
        return 0;
    struct pt_hot_counts *h = hot();
    if (!h || (h->run_tick++ & (PT_RUN_EVERY - 1)))
        return 0;
    return bpf_ktime_get_ns();
}

/* One run of program PROG, begun at T0 (run_clock). */
static __always_inline void note_run(__u32 prog, __u64 t0)
{
    __u64 d = bpf_ktime_get_ns() - t0;
    __u32 b = log2_slot(d);
    __u32 i = 4 * b + (b >= 2 ? (__u32)(d >> (b - 2)) & 3 : 0);
    if (prog < PT_TIMED_COUNT && i < PT_RUN_BUCKETS)
        HOT_ADD(run_hist[prog][i], 1);
}

/* A part of a hot program begins (PARKTRACE_TIME_PARTS): its clock, or 0. */
static __always_inline __u64 part_clock(void)
{
    return time_parts ? bpf_ktime_get_ns() : 0;
}

/* Part PART, begun at T0 (part_clock), is done. */
static __always_inline void part_done(__u32 part, __u64 t0)
{
    if (!time_parts || part >= PT_PART_COUNT)
        return;
    HOT_ADD(part_ns[part], bpf_ktime_get_ns() - t0);
    HOT_ADD(part_runs[part], 1);
}

/* KEY's slot when it is slot LAST - 1, one the thread waited on lately,
 * still published for KEY (valid 1: recycling marks a slot 2 before it
 * takes its key out of the index); NULL otherwise. A thread waiting on one
 * or two blockers again and again skips the index's hash. */
static __always_inline struct pt_slot *last_slot(const struct pt_blocker_key *key, __u32 last, __u32 *idx)
{
    if (!last)
        return NULL;
    __u32 i = last - 1;
    struct pt_slot *s = bpf_map_lookup_elem(&slots, &i);
    if (!s || s->valid != 1 || s->key.addr != key->addr || s->key.ino != key->ino ||
        s->key.owner != key->owner || s->key.kind != key->kind)
        return NULL;
    *idx = i;
    return s;
}

/* A slot given back by user space into *IDX (free_ring): 0, or -1 when
 * none is left (or other CPUs kept winning it). */
static __always_inline long free_slot_take(__u32 *idx)
{
    for (int i = 0; i < 4; i++) {
        __u64 tail = *(volatile __u64 *)&free_tail;
        if (tail >= *(volatile __u64 *)&free_head || !max_slots)
            return -1;
        __u32 pos = (__u32)(tail % max_slots);
        __u64 *v = bpf_map_lookup_elem(&free_ring, &pos);
        if (!v)
            return -1;
        __u32 got = (__u32)*(volatile __u64 *)v;
        if (__sync_val_compare_and_swap(&free_tail, tail, tail + 1) == tail) {
            *idx = got;
            return 0;
        }
    }
    return -1;
}

/* A slot for a new blocker: this CPU's spare (one it took and lost a race
 * with), one given back, or one never used. */
static __always_inline long slot_take(__u32 *idx)
{
    struct pt_hot_counts *h = hot();
    __u32 spare = h ? __sync_lock_test_and_set(&h->spare_slot, 0) : 0;
    if (spare) {
        *idx = spare - 1;
        return 0;
    }
    if (!free_slot_take(idx))
        return 0;
    __u64 n = next_slot < max_slots ? __sync_fetch_and_add(&next_slot, 1) : max_slots;
    if (n >= max_slots)
        return -1;
    *idx = n;
    return 0;
}

/* Finds the blocker's slot, creating it on the first wait. LAST, when not
 * NULL, is the thread's last two slots + 1, the most recent first
 * (last_slot), updated here; *AGAIN then says whether the slot was one of
 * them, still holding this blocker (a recycled slot can come back under
 * the same index for another). */
static __always_inline struct pt_slot *slot_get(struct pt_blocker_key *key, __u32 *idx_out,
                                                __u64 uaddr, __u64 pid_tgid, __u64 now, __u32 *last, bool *again)
{
    if (last) {
        *again = true;
        struct pt_slot *hit = last_slot(key, last[0], idx_out);
        if (hit)
            return hit;
        hit = last_slot(key, last[1], idx_out);
        if (hit) {
            last[1] = last[0];
            last[0] = *idx_out + 1;
            return hit;
        }
        *again = false;
    }
    __u32 *idxp = bpf_map_lookup_elem(&slot_index, key);
    __u32 idx;

    if (idxp) {
        idx = *idxp;
    } else {
        __u64 t0 = part_clock();
        /* Recycled slots first, then fresh ones: the slots touched (and
         * user space's scan) follow the peak of live blockers, not the
         * table's size. */
        if (slot_take(&idx)) {
            count_drop(PT_DROP_BLOCKERS);
            return NULL;
        }
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
            /* Another CPU won the race (or the index is full): the slot,
             * never published, is this CPU's spare, the next new blocker's.
             * Left unused, each lost race kept a slot for good: at 10 000
             * new objects a second the table ran out while a fifth of it
             * was live. */
            struct pt_hot_counts *h = hot();
            if (h)
                __sync_lock_test_and_set(&h->spare_slot, idx + 1);
            idxp = bpf_map_lookup_elem(&slot_index, key);
            if (!idxp) {
                count_drop(PT_DROP_BLOCKERS);
                return NULL;
            }
            idx = *idxp;
        } else {
            s->valid = 1;
        }
        part_done(PT_PART_SLOT_NEW, t0);
    }
    *idx_out = idx;
    if (last) {
        last[1] = last[0];
        last[0] = idx + 1;
    }
    return bpf_map_lookup_elem(&slots, &idx);
}

/* Counts a thread whose record is in the slot itself (its tid in the slot,
 * GEN_SEEN the window it was last counted in, 0: never). Only that thread
 * writes it. */
static __always_inline void count_inline_thread(struct pt_slot *s, __u32 *gen_seen, __u32 gen, bool in_window)
{
    __u32 was = *gen_seen;
    if (was == gen)
        return;
    *gen_seen = gen;
    if (!was)
        __sync_fetch_and_add(&s->threads, 1);
    if (in_window)
        __sync_fetch_and_add(&s->threads_win, 1);
}

/* Counts the thread once per window and once per run. A wait that began
 * before the window was already counted when user space opened it. LIVE,
 * the thread's own record, remembers the last two slots counted in this
 * window, so a thread waiting on one or two blockers again and again skips
 * the hash lookup. */
static __always_inline void note_thread(struct pt_slot *s, __u32 idx, __u32 tid, __u64 start,
                                        struct pt_wait *live)
{
    struct pt_thread_key tk = { .slot = idx, .reuses = s->reuses, .tid = tid };
    __u32 gen = window_gen;
    bool in_window = start >= window_start_ns;

    if (live->counted_gen == gen && (live->counted_slot[0] == idx + 1 || live->counted_slot[1] == idx + 1))
        return;
    if (live->counted_gen != gen) {
        live->counted_gen = gen;
        live->counted_slot[0] = 0;
    }
    live->counted_slot[1] = live->counted_slot[0];
    live->counted_slot[0] = idx + 1;
    /* The first two waiters are counted in the slot itself: a blocker most
     * threads meet once or twice (a database's row lock on each new
     * transaction object) cost a hash insert, the dearest part of a wait's
     * end, for each. The second claims its place once. */
    if (tid == s->first_tid) {
        count_inline_thread(s, &s->first_tid_gen, gen, in_window);
        return;
    }
    __u32 second = s->second_tid;
    if (!second) {
        second = __sync_val_compare_and_swap(&s->second_tid, 0, tid);
        second = second ? second : tid;
    }
    if (tid == second) {
        count_inline_thread(s, &s->second_tid_gen, gen, in_window);
        return;
    }
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
        live->counted_slot[0] = 0;
        count_drop(PT_DROP_THREADS);
    }
}

/* Leaves a wait: drops parked_now and closes the busy period if it was the
 * last waiter. `discard` is for calls that turned out not to sleep (a
 * busy period one of them opened moves up to the waits still parked). An end
 * put back in time (RESUME_NS, when it was read, else 0) with others still
 * parked closes the busy period at NOW and opens it again at RESUME_NS:
 * those others may have come after NOW, and real time must not cover a
 * stretch no wait does (it may leave out some that one did). */
static __always_inline void leave_wait(struct pt_slot *s, __u64 start_ns, __u32 flags, __u64 now,
                                       bool discard, __u64 resume_ns)
{
    __u64 busy_start = s->busy_start;
    __sync_fetch_and_add(&s->start_sum, -start_ns);
    __s64 old = __sync_fetch_and_add(&s->parked_now, -1);

    if (old == 1 && !(discard && (flags & PT_WAIT_OPENED_BUSY))) {
        __sync_fetch_and_add(&s->real_ns, now - busy_start);
    } else if (old > 1 && resume_ns > now && now > busy_start) {
        __sync_fetch_and_add(&s->real_ns, now - busy_start);
        s->busy_start = resume_ns;
    } else if (old > 1 && discard && (flags & PT_WAIT_OPENED_BUSY)) {
        /* The busy period this call opened never slept: it starts again
         * with the waits still parked, at their mean start (the one's,
         * exactly), no earlier than the first of them, so real time stays
         * within thread time (a CI run once read 71 ns over). */
        __u64 mean = s->start_sum / (__u64)(old - 1);
        if (mean > busy_start)
            s->busy_start = mean;
    }
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

/* What the end of a wait needs of its record: copied out as the wait ends,
 * so the record (too big to copy on the BPF stack) can be reused at once. */
struct pt_wait_end {
    __u64 start_ns;
    __u32 concurrency;
    __u32 odds, waker_odds;
    __u32 slot;
    __u32 flags;
    __s32 stack_id;
    __s32 waker_stack;
    __u32 waker_tgid;
    __u32 end;
    __u64 resume_ns;    /* an end put back in time: the moment it was read, else 0 */
};

/* Copies W's wait into E and closes it in W. */
static __always_inline void wait_end_copy(struct pt_wait_end *e, struct pt_wait *w)
{
    e->start_ns = w->start_ns;
    e->resume_ns = 0;
    e->concurrency = w->concurrency;
    e->odds = w->odds;
    e->waker_odds = w->waker_odds;
    e->slot = w->slot;
    e->flags = w->flags;
    e->stack_id = w->stack_id;
    e->waker_stack = w->waker_stack;
    e->waker_tgid = w->waker_tgid;
    e->end = w->end;
    w->flags = 0;
}

/* A wait has begun on slot S: only the live part, ParkedNow and the busy
 * period. Begun waits are completed ones plus those in progress, so no
 * separate count is kept unless --threshold needs one. END is how it ends
 * unless its waking says otherwise, EXTRA more flags. The flags are
 * written once, last: a waking on another CPU (the waiter still on its
 * CPU, going to sleep) reads them to decide whether the wait is open, and
 * one that read ACTIVE alone and wrote it back with END_SEEN lost TIMED,
 * so the wait's end never left ParkedNow (H2's row locks: a waiter left
 * parked for good now and then, seconds of time no thread waited). */
static __always_inline void wait_start(struct pt_slot *s, __u32 idx, struct pt_wait *w, __u64 now, __u32 end,
                                       __u32 extra)
{
    __u32 flags = PT_WAIT_ACTIVE | extra;
    w->start_ns = now;
    w->slot = idx;
    w->odds = w->waker_odds = PT_ODDS_ONE;
    w->concurrency = 0;
    w->stack_id = -1;
    w->waker_stack = -1;
    w->end = end;
    if (trace_chains)
        w->holder = 0;      /* a futex wait's is read next (futex_wait_opens) */
    if (!threshold || __sync_fetch_and_add(&s->attempts, 1) >= threshold) {
        flags |= PT_WAIT_TIMED;
        __sync_fetch_and_add(&s->start_sum, now);
        __s64 old = __sync_fetch_and_add(&s->parked_now, 1);
        if (old == 0) {
            s->busy_start = now;
            flags |= PT_WAIT_OPENED_BUSY;
        }
        w->concurrency = old + 1;
    }
    /* x86 keeps stores in order; this keeps the compiler from moving any
     * of the record's fields after its flags. */
    asm volatile("" ::: "memory");
    w->flags = flags;
}

/* Undoes a wait that did not sleep after all, or whose end was lost. One
 * under way when user space last opened a window was counted up to then
 * by that window's snapshot (parked_now, start_sum): it ends there, so the
 * closed window keeps what it reported and the next is not charged for
 * it (a real-time player of a ping-pong, whose lost switch-in cannot be
 * placed, left 560 ms of waiting in one window and took it from the next:
 * CSP 0.77, then 0.21). */
static __always_inline void drop_wait(struct pt_slot *s, struct pt_wait *w, __u64 now)
{
    if (threshold)
        __sync_fetch_and_add(&s->attempts, -1);
    __u64 opened = window_start_ns;
    if ((w->flags & PT_WAIT_TIMED) && w->start_ns < opened && opened <= now) {
        __sync_fetch_and_add(&s->parks, 1);
        __sync_fetch_and_add(&s->thread_ns, opened - w->start_ns);
        leave_wait(s, w->start_ns, w->flags, opened, false, 0);
    } else if (w->flags & PT_WAIT_TIMED) {
        leave_wait(s, w->start_ns, w->flags, now, true, 0);
    }
    w->flags = 0;
}

/* A record still active when its thread starts another wait, or exits,
 * lost its end: a task-storage lookup can fail while another CPU user holds
 * the storage's per-CPU lock. Its time is dropped and counted, never left
 * to run on as a waiter that does not exist (end_stale_wait first ends
 * what it can). */
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

#endif
