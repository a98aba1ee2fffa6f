/* Goroutine waits (kind go-park), from outside any Go binary: uprobes on
 * the runtime's own functions, entry probes only (a goroutine's stack
 * moves, so a return probe's trampoline would be copied with it). A
 * goroutine that parks (runtime.gopark) waits until another readies it
 * (runtime.goready): one park, one wait, charged to the object it parked
 * on. A semaphore's address comes from runtime.semacquire1, just before
 * its park; a channel's and a condition's from the lock gopark is given;
 * a select's wait is keyed by its call site. Go's register ABI (1.17 and
 * later, amd64): arguments in rax, rbx, rcx, ..., the current g in r14.
 * Included by parktrace.bpf.c after chains.bpf.h, before lifetimes.bpf.h
 * (whose exits end a Go process's open waits: go_process_gone).
 *
 * Owns: the maps go_layouts, go_semas, go_waits, go_wait_zero; the programs
 * go_semacquire, go_park, go_ready, and go_process_gone's callback.
 *
 * Shared: slots, slot_get, wait_start, wait_finish (slots.bpf.h,
 * wait_end.bpf.h); stacks and the stack budget (stacks.bpf.h). */
#ifndef PT_GO_UPROBES_BPF_H
#define PT_GO_UPROBES_BPF_H

/* The Go processes user space has read (user/golang/go_tracker.c). */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1024);
    __type(key, __u32);
    __type(value, struct pt_go_layout);
} go_layouts SEC(".maps");

/* Each goroutine's last semaphore, as runtime.semacquire1 was entered: the
 * park that follows waits on it. Overwritten by the next, so an acquire
 * that never parked leaves nothing a later park could take. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 16384);
    __type(key, struct pt_go_key);
    __type(value, __u64);
} go_semas SEC(".maps");

/* A goroutine's wait record: a thread's, and the goroutine's id. */
struct go_wait {
    struct pt_wait w;
    __u64 goid;
};

/* Each goroutine's wait record, kept from one park to the next (its stack
 * gaps go on), and dropped with its process. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, 65536);
    __type(key, struct pt_go_key);
    __type(value, struct go_wait);
} go_waits SEC(".maps");

/* A zeroed record to make a goroutine's first from (too big for the stack). */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct go_wait);
} go_wait_zero SEC(".maps");

/* The Go process of the current thread, if parktrace reads its parks. */
static __always_inline struct pt_go_layout *go_process(__u32 tgid)
{
    if (!tgid_traced(tgid))
        return NULL;
    return bpf_map_lookup_elem(&go_layouts, &tgid);
}

/* The goroutine id of G (its "thread" in a go-park row), 0 if unreadable. */
static __always_inline __u32 go_id(const struct pt_go_layout *l, __u64 g)
{
    __u64 id = 0;
    bpf_probe_read_user(&id, sizeof(id), (void *)(g + l->goid));
    return (__u32)id;
}

SEC("uprobe")
int BPF_KPROBE(go_semacquire)
{
    __u32 tgid = bpf_get_current_pid_tgid() >> 32;
    if (!go_process(tgid))
        return 0;
    struct pt_go_key k = { .g = ctx->r14, .tgid = tgid };
    __u64 addr = ctx->ax;
    bpf_map_update_elem(&go_semas, &k, &addr, BPF_ANY);
    return 0;
}

/* The object a park with WHAT waits on: a semaphore's address, a channel,
 * a condition, a select's call site; 0 for a park parktrace leaves alone
 * (the runtime's own: sleeps, the network poller, the collector). REPARK:
 * a semaphore's second or later park in one acquire, as far as the
 * semaphore's mark says. */
static __always_inline __u64 go_park_object(struct pt_regs *ctx, const struct pt_go_layout *l,
                                            struct pt_go_key *k, __u32 *what, bool *repark)
{
    __u8 reason = (__u8)ctx->cx;
    __u64 lock = ctx->bx, *sema, ra = 0;
    if (reason == l->reason[PT_GO_SEMA]) {
        /* Marked as its first park takes it: a goroutine readied that
         * lost the semaphore parks again in the same acquire (a wait of
         * its own, counted apart: Go's profile counts the acquire). */
        *what = PT_GO_SEMA;
        sema = bpf_map_lookup_elem(&go_semas, k);
        if (!sema)
            return 0;
        *repark = *sema & 1;
        *sema |= 1;
        return *sema & ~1ull;
    }
    if (reason == l->reason[PT_GO_RECV] || reason == l->reason[PT_GO_SEND]) {
        *what = reason == l->reason[PT_GO_RECV] ? PT_GO_RECV : PT_GO_SEND;
        return lock ? lock - l->chan_lock : 0;
    }
    if (reason == l->reason[PT_GO_COND]) {
        *what = PT_GO_COND;
        return lock ? lock - l->cond_lock : 0;
    }
    if (reason == l->reason[PT_GO_SELECT]) {
        /* runtime.selectgo's return address: gopark has not pushed a frame
         * yet, so rbp is selectgo's, and the word above it its caller's pc. */
        *what = PT_GO_SELECT;
        bpf_probe_read_user(&ra, sizeof(ra), (void *)(ctx->bp + 8));
        return ra;
    }
    return 0;
}

/* Whether W's open wait is this park's, on ADDR for WHAT, its probe hit a
 * second time: gopark's prologue found the stack short or a preemption
 * asked for (the collector's stack scans ask often) and went through
 * morestack, which runs the function again from its first instruction,
 * and the probe with it. The goroutine has not parked in between: a park
 * is only ended by its goready, seen every time. (On Prometheus under
 * load, 35 waits in 10 s were ended as lost this way, a few hundred us
 * after they began, on the very object they parked on again.) */
static __always_inline bool park_entered_again(const struct pt_wait *w, __u64 addr, __u32 what, __u32 tgid)
{
    const struct pt_slot *s = bpf_map_lookup_elem(&slots, &w->slot);
    return s && s->key.addr == addr && s->key.ino == what && s->key.owner == tgid &&
           s->key.kind == PT_KIND_GO_PARK;
}

SEC("uprobe")
int BPF_KPROBE(go_park)
{
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    __u32 tgid = pid_tgid >> 32, what = 0, idx, zero = 0;
    struct pt_go_layout *l = go_process(tgid);
    if (!l)
        return 0;
    struct pt_go_key k = { .g = ctx->r14, .tgid = tgid };
    bool repark = false;
    __u64 addr = go_park_object(ctx, l, &k, &what, &repark);
    if (!addr)
        return 0;
    struct go_wait *gw = bpf_map_lookup_elem(&go_waits, &k);
    if (gw && (gw->w.flags & PT_WAIT_ACTIVE) && park_entered_again(&gw->w, addr, what, tgid)) {
        HOT_ADD(go_park_reentries, 1);
        return 0;
    }
    if (repark)
        HOT_ADD(go_reparks, 1);
    if (!gw) {
        struct go_wait *fresh = bpf_map_lookup_elem(&go_wait_zero, &zero);
        if (!fresh || bpf_map_update_elem(&go_waits, &k, fresh, BPF_NOEXIST)) {
            count_drop(PT_DROP_WAITING);
            return 0;
        }
        if (!(gw = bpf_map_lookup_elem(&go_waits, &k)))
            return 0;
    }
    struct pt_wait *w = &gw->w;
    __u64 now = bpf_ktime_get_ns();
    reclaim_stale(w, now);      /* a park whose ready was not seen */
    /* The goroutine stands where a thread would: its id, in its process. */
    gw->goid = go_id(l, k.g);
    __u64 who = (pid_tgid & ~0xffffffffull) | (__u32)gw->goid;
    struct pt_blocker_key key = { .addr = addr, .ino = what, .owner = tgid, .kind = PT_KIND_GO_PARK };
    bool again;
    struct pt_slot *s = slot_get(&key, &idx, addr, who, now, w->last_slot, &again);
    if (!s)
        return 0;
    wait_start(s, idx, w, now, PT_END_WOKEN, PT_WAIT_UPROBE);
    bool naming, for_waker;
    if (!wait_stack_skipped(s, idx, w, who, &naming, &for_waker))
        take_wait_stack(ctx, s, idx, w, who, ctx, naming, for_waker, false);
    return 0;
}

SEC("uprobe")
int BPF_KPROBE(go_ready)
{
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    __u32 tgid = pid_tgid >> 32;
    struct pt_go_layout *l = go_process(tgid);
    if (!l)
        return 0;
    struct pt_go_key k = { .g = ctx->ax, .tgid = tgid };
    struct go_wait *gw = bpf_map_lookup_elem(&go_waits, &k);
    if (!gw || !(gw->w.flags & PT_WAIT_ACTIVE))
        return 0;
    struct pt_wait *w = &gw->w;
    struct pt_slot *s = bpf_map_lookup_elem(&slots, &w->slot);
    if (!s) {
        w->flags = 0;
        return 0;
    }
    /* The waker's stack where the waiter kept its own, as a thread's
     * waker's (within the waker gap and the stack budget): the goroutine
     * that readied it, on its own stack (goready runs before the switch to
     * the system stack), walked by frame pointers as Go keeps them. */
    if (w->stack_id >= 0 && (w->flags & PT_WAIT_TIMED))
        note_waker_at(ctx, w, tgid, bpf_get_current_task_btf(), (struct pt_regs *)ctx);
    /* The clock read after the walk, just before the wait leaves the
     * blocker: the goroutine is still parked meanwhile (readied after this
     * probe), and a wait begun on the blocker after an earlier clock read
     * but counted before this one's end made a busy period span the gap
     * between them (Prometheus's channels read real time 31 us over
     * thread time). */
    __u64 now = bpf_ktime_get_ns();
    struct pt_wait_end done;
    wait_end_copy(&done, w);
    wait_finish(s, &done, w, now, PT_END_WOKEN, (__u32)gw->goid, tgid, NULL);
    return 0;
}

/* A Go process is gone: its goroutines' records go, and a goroutine still
 * parked ends its wait there, interrupted, as a thread's ends at its exit. */
static long go_forget_one(struct bpf_map *map, struct pt_go_key *k, struct go_wait *gw, __u32 *tgid)
{
    if (k->tgid != *tgid)
        return 0;
    struct pt_slot *s = gw->w.flags & PT_WAIT_ACTIVE ? bpf_map_lookup_elem(&slots, &gw->w.slot) : NULL;
    if (s) {
        struct pt_wait_end done;
        wait_end_copy(&done, &gw->w);
        wait_finish(s, &done, &gw->w, bpf_ktime_get_ns(), PT_END_INTERRUPTED, (__u32)gw->goid, k->tgid, NULL);
    }
    bpf_map_delete_elem(map, k);
    return 0;
}

/* Called as the last thread of process TGID exits (lifetimes.bpf.h). */
static __always_inline void go_process_gone(__u32 tgid)
{
    if (!bpf_map_lookup_elem(&go_layouts, &tgid))
        return;
    bpf_for_each_map_elem(&go_waits, go_forget_one, &tgid, 0);
    bpf_map_delete_elem(&go_layouts, &tgid);
}

#endif
