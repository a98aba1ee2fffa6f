/* HotSpot JVMs seen from outside: which sleeping thread is a Java thread,
 * and the blocker key of its park (LockSupport.park), monitor entry
 * (synchronized) or Object.wait. Included by parktrace.bpf.c after
 * slots.bpf.h and before stacks.bpf.h, whose walker reads both maps.
 *
 * Owns: the maps jvm_layouts (tgid -> layout, from user space) and
 * java_threads (tid -> JavaThread*), the globals layouts_gen and
 * safepoint_gen; jvm_code_known, learn_park_offset,
 * javathread_of, klass_word, note_klass, monitor_key, java_wait_key,
 * park_cache_fill, park_key_by_cache, park_blocker_key.
 *
 * Shared: jvm_layouts and java_threads with unwind.bpf.h and
 * unwind_java.bpf.h (Java frames) and jvm_uprobes.bpf.h (which fills
 * java_threads at thread start); java_wait_key and note_klass are called
 * from sched.bpf.h. */
#ifndef PT_JVM_BPF_H
#define PT_JVM_BPF_H

/* Bumped by user space whenever it adds, changes or removes a layout: a
 * thread's cached park (pt_park_cache) holds only while it is unchanged,
 * so a JVM user space gave up on has its parks shown as futex waits again. */
__u32 layouts_gen = 1;

/* Bumped at the start and at the end of every safepoint of every probed
 * libjvm (jvm_safepoint, jvm_uprobes.bpf.h): a stop-the-world collector
 * moves objects only in between, so a park's cached reads of the heap
 * (pt_park_cache) hold while it is unchanged. One counter for all JVMs:
 * each JVM's few safepoints a second cost the others a reread or two. */
__u32 safepoint_gen = 1;

/* JVMs (tgid -> layout) and their threads (tid -> JavaThread*), kept by
 * user space, which finds JVMs and walks their thread lists. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1024);
    __type(key, __u32);
    __type(value, struct pt_jvm_layout);
} jvm_layouts SEC(".maps");

/* Whether L holds its interpreter's and code cache's ranges: a JVM found
 * early in its start has them later (user space reads them each tick). */
static __always_inline bool jvm_code_known(const struct pt_jvm_layout *l)
{
    return l->code_lo && l->interp_lo;
}

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
static __always_inline void park_cache_fill(struct pt_park_cache *pc, const struct pt_jvm_layout *l, __u64 jt);
static __always_inline void park_key_by_cache(struct pt_park_cache *pc, __u32 tgid, struct pt_blocker_key *key);

/* The reference field at ADDR of the current process's heap, decoded (a
 * narrow oop when COMPRESSED, from BASE and SHIFT); 0 when unreadable. */
static __always_inline __u64 heap_ref(__u64 addr, bool compressed, __u64 base, __u32 shift)
{
    if (compressed) {
        __u32 narrow = 0;
        bpf_probe_read_user(&narrow, sizeof(narrow), (void *)addr);
        return narrow ? base + ((__u64)narrow << shift) : 0;
    }
    __u64 oop = 0;
    bpf_probe_read_user(&oop, sizeof(oop), (void *)addr);
    return oop;
}

/* OBJ's klass word as stored: narrow when class pointers are compressed.
 * It is part of a Java blocker's key, beside the address: a young
 * collection copies survivors into regions it emptied before, so another
 * object can take a blocker's old address, and one of another class must
 * not join its row (CI once saw ZooKeeper's ConditionObject waits, 7 931,
 * land in a ReentrantLock's). Same-class reuse is harmless to every figure
 * by class. */
static __always_inline __u64 klass_word(__u64 obj, __u32 off, bool compressed)
{
    __u64 word = 0;
    bpf_probe_read_user(&word, compressed ? sizeof(__u32) : sizeof(word), (void *)(obj + off));
    return word;
}

/* A Java blocker's Klass*, decoded once from its key's klass word, when
 * its slot has none yet (Java keys are owned by their tgid). */
static __always_inline __u64 note_klass(struct pt_slot *s, const struct pt_blocker_key *key, struct pt_wait *w)
{
    if (s->klass || !key->ino || (key->kind & 0xff) == PT_KIND_FUTEX)
        return 0;
    /* The thread's own JVM, whose layout its park cache holds while current. */
    const struct pt_park_cache *pc = &w->park;
    bool compressed = pc->compressed_klass;
    __u64 base = pc->klass_base;
    __u32 shift = pc->klass_shift;
    if (!pc->jt || pc->gen != layouts_gen) {
        struct pt_jvm_layout *l = bpf_map_lookup_elem(&jvm_layouts, &key->owner);
        if (!l)
            return 0;
        compressed = l->compressed_klass;
        base = l->klass_base;
        shift = l->klass_shift;
    }
    __u64 klass = compressed ? base + (key->ino << shift) : key->ino;
    s->klass = klass;
    /* User space names a class from the JVM's memory, at its next tick:
     * a main thread's joins in the last 100 ms of a JVM's life (ParkMix's)
     * were read after it had exited, "<unknown class>". A class new to this
     * thread's blockers is returned, for the caller to wake it now
     * (ask_klass_name); a thread making a new object of one class at each
     * wait (H2's transactions) asks once. */
    if (w->klass_posted == klass)
        return 0;
    w->klass_posted = klass;
    return klass;
}

/* A Java thread sleeping outside its Parker but with a monitor pending is
 * entering a contended `synchronized` (jvm-monitor); with a monitor it waits
 * on, it is in Object.wait (jvm-wait). Either is keyed by the monitor's object.
 * PC: the thread's park cache, filled for JavaThread JT. */
static __always_inline bool monitor_key(const struct pt_park_cache *pc, __u64 jt, __u32 tgid,
                                        struct pt_blocker_key *key)
{
    __u64 mon = 0, handle = 0, obj = 0;
    __u32 kind = PT_KIND_JVM_MONITOR;
    if (!pc->pending_monitor)
        return false;
    /* Object.wait first: getting the monitor back at its end is still
     * inside wait() (the waiting monitor stays set until it returns). */
    if (trace_jvm_wait) {
        bpf_probe_read_user(&mon, sizeof(mon), (void *)(jt + pc->waiting_monitor));
        kind = PT_KIND_JVM_WAIT;
    }
    if (!mon && trace_jvm_monitor) {
        bpf_probe_read_user(&mon, sizeof(mon), (void *)(jt + pc->pending_monitor));
        kind = PT_KIND_JVM_MONITOR;
    }
    if (!mon)
        return false;
    /* ObjectMonitor::_object is a weak handle: a pointer to the oop's slot. */
    bpf_probe_read_user(&handle, sizeof(handle), (void *)(mon + pc->monitor_object));
    if (handle)
        bpf_probe_read_user(&obj, sizeof(obj), (void *)handle);
    if (!obj)
        return false;
    key->addr = obj;
    key->ino = klass_word(obj, pc->klass, pc->compressed_klass);
    key->owner = tgid;
    key->kind = kind;
    return true;
}

/* A Java thread sleeping on the futex inside its own JavaThread (its
 * Parker) is parked: the wait is charged to (tgid, parkBlocker object),
 * never to the futex. The blocker's Klass* names its class later. Other
 * sleeps of a known Java thread may be monitor entries or Object.wait.
 * W: the thread's record, with its JavaThread as its last park found it
 * (w->park); a park on a futex inside it reads no map (neither its JVM's
 * layout nor java_threads), nor the JavaThread's handle to its Thread: a
 * thread's JavaThread can change only by detaching and attaching again,
 * which moves its Parker, and an exec forgets it (exec_forget_park). */
static __always_inline bool java_wait_key(struct pt_blocker_key *key, __u64 uaddr,
                                          __u64 pid_tgid, struct pt_wait *w)
{
    __u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
    bool parks = trace_jvm_park && !park_uprobes;
    struct pt_park_cache *pc = &w->park;
    __u64 jt = pc->jt;
    bool monitors = trace_jvm_monitor || trace_jvm_wait;
    if (jt && pc->gen == layouts_gen) {
        bool own = uaddr >= jt && uaddr < jt + pc->thread_size;
        if (!own)
            return monitors && monitor_key(pc, jt, tgid, key);
        if (parks && pc->handle) {
            park_key_by_cache(pc, tgid, key);
            return true;
        }
    }
    struct pt_jvm_layout *l = bpf_map_lookup_elem(&jvm_layouts, &tgid);
    if (!l)
        return false;
    __u64 *known = bpf_map_lookup_elem(&java_threads, &tid);
    if (known) {
        jt = *known;
        if (uaddr < jt || uaddr >= jt + l->thread_size) {
            if (!monitors)
                return false;
            park_cache_fill(pc, l, jt);
            return monitor_key(pc, jt, tgid, key);
        }
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
    park_cache_fill(pc, l, jt);
    park_key_by_cache(pc, tgid, key);
    return true;
}

/* Fills PC for JavaThread JT of a JVM of layout L: JT's handle to its
 * java.lang.Thread (0 when unreadable) and the layout a park needs. */
static __always_inline void park_cache_fill(struct pt_park_cache *pc, const struct pt_jvm_layout *l, __u64 jt)
{
    __u64 handle = 0;
    bpf_probe_read_user(&handle, sizeof(handle), (void *)(jt + l->thread_obj));
    pc->jt = jt;
    pc->gen = layouts_gen;
    pc->handle = handle;
    pc->oop_base = l->oop_base;
    pc->thread_size = l->thread_size;
    pc->park_blocker = l->park_blocker;
    pc->oop_shift = l->oop_shift;
    pc->compressed_oops = l->compressed_oops;
    pc->klass = l->klass;
    pc->compressed_klass = l->compressed_klass;
    pc->stable_oops = l->stable_oops;
    pc->klass_base = l->klass_base;
    pc->klass_shift = l->klass_shift;
    pc->pending_monitor = (__u32)l->pending_monitor;
    pc->waiting_monitor = (__u32)l->waiting_monitor;
    pc->monitor_object = (__u32)l->monitor_object;
    pc->thread_oop = 0;     /* nothing kept yet */
}

/* The key of JavaThread JT's current park: (tgid, its parkBlocker object). */
static __always_inline void park_blocker_key(const struct pt_jvm_layout *l, __u64 jt, __u32 tgid,
                                             struct pt_blocker_key *key)
{
    struct pt_park_cache pc = {};
    park_cache_fill(&pc, l, jt);
    park_key_by_cache(&pc, tgid, key);
}

/* The same from PC (the Thread object itself can move in a collection; the
 * handle cannot). */
static __always_inline void park_key_by_cache(struct pt_park_cache *pc, __u32 tgid, struct pt_blocker_key *key)
{
    /* Read before the heap: a safepoint that begins meanwhile leaves what
     * is read now under the older count, reread at the next park. */
    __u32 gen = safepoint_gen;
    bool kept = pc->stable_oops && pc->oop_gen == gen && pc->thread_oop;
    __u64 thread_oop = kept ? pc->thread_oop : 0, blocker = 0;
    if (!kept && pc->handle)
        bpf_probe_read_user(&thread_oop, sizeof(thread_oop), (void *)pc->handle);
    if (thread_oop)
        blocker = heap_ref(thread_oop + pc->park_blocker, pc->compressed_oops, pc->oop_base, pc->oop_shift);
    /* A park without a blocker is one "<no blocker>" row per JVM. */
    key->addr = blocker;
    key->owner = tgid;
    key->kind = PT_KIND_JVM_PARK;
    /* A new count: nothing read under the last one holds. */
    if (!kept && pc->stable_oops) {
        pc->thread_oop = thread_oop;
        pc->oop_gen = gen;
        pc->blocker[0] = pc->blocker[1] = 0;
    }
    /* Between two safepoints an address holds one object: its class as
     * read before (a pool's worker alternates between two blockers). */
    if (!blocker)
        key->ino = 0;
    else if (kept && blocker == pc->blocker[0])
        key->ino = pc->klass_word[0];
    else if (kept && blocker == pc->blocker[1])
        key->ino = pc->klass_word[1];
    else if ((key->ino = klass_word(blocker, pc->klass, pc->compressed_klass))) {
        /* A read that failed (0) is not kept: it would hold to the next safepoint. */
        pc->blocker[1] = pc->blocker[0];
        pc->klass_word[1] = pc->klass_word[0];
        pc->blocker[0] = blocker;
        pc->klass_word[0] = key->ino;
    }
}

#endif
