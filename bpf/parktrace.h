/* Structures shared by the BPF programs and the user-space loader.
 * Everything here is plain data with fixed-width fields so both sides
 * agree on the layout without BTF. */
#ifndef PARKTRACE_H
#define PARKTRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PT_HIST_SLOTS 40        /* log2(ns) buckets: 1 ns .. 2^39 ns, last is open */

/* --self-stats: the run times of the programs every traced thread pays for,
 * four buckets per power of two (bucket 4 * log2(ns) + the next two bits),
 * for their 99th percentiles. */
enum pt_timed { PT_TIMED_SWITCH, PT_TIMED_WAKING, PT_TIMED_COUNT };
#define PT_RUN_BUCKETS (4 * PT_HIST_SLOTS)
#define PT_RUN_EVERY 16      /* --self-stats times one hot program run in 16 */
/* PARKTRACE_TIME_PARTS=1 with --self-stats: the parts of the two hot
 * programs, each timed at every run (tools/bench; a diagnostic, its own
 * two clock reads a part inside what it measures). */
enum pt_part {
    PT_PART_OUT_STALE,   /* switch out: a wait left open ended (end_stale_wait) */
    PT_PART_OUT_IDLE,    /* switch out: an idle sleep begins */
    PT_PART_KEY,         /* switch out: the blocker's key (Java reads, or the futex's) */
    PT_PART_SLOT,        /* switch out: its slot found or made, its class noted */
    PT_PART_START,       /* switch out: the wait opened */
    PT_PART_STACK,       /* switch out: the waiter's stack (budget, cache, walk) */
    PT_PART_IN_IDLE,     /* switch in: an idle sleep ends */
    PT_PART_IN_END,      /* switch in: a wait ends (its counts, threads, stacks' time) */
    PT_PART_WAKE,        /* waking: the woken wait found and its end decided */
    PT_PART_WAKER,       /* waking: the waker's stack and entry (note_waker) */
    /* Within the parts above, for their share: */
    PT_PART_SLOT_NEW,    /* slot: a blocker new to the table (index, free ring, fill) */
    PT_PART_END_THREADS, /* in_end: its thread counted for the blocker (note_thread) */
    PT_PART_END_CHARGE,  /* in_end: its time charged to its stack and waker (charge_wait) */
    PT_PART_COUNT
};

/* Counters bumped at many events on every CPU, kept per CPU (user space
 * sums them): one global line written from two CPUs at each event moved
 * between them every time, and its cost counted in the figures it gave. */
struct pt_hot_counts {
    __u64 run_hist[PT_TIMED_COUNT][PT_RUN_BUCKETS];  /* --self-stats, one run in PT_RUN_EVERY */
    __u64 run_tick;             /* this CPU's runs, to pick those timed */
    __u64 stack_budget_skips;   /* stacks left out over --stack-budget */
    /* Waits charged to a stack taken with lower odds, and their own time;
     * waits left uncharged because their stack was left out. */
    __u64 stack_samples, stack_sampled_ns, stack_samples_lost;
    /* The sum of the squares of those times (in 2^10 ns, each at most
     * 2^22 of them): with stack_sampled_ns, how many equal samples the
     * unequal ones are worth (stack_samples_effective). */
    __u64 stack_sampled_sq;
    __u64 unwind_walks, unwind_walk_ns, unwind_frames;  /* kernel walks, --self-stats */
    /* Long waits given their stack as they ended (end_stacks.bpf.h), and
     * those that could not be (no stack, no budget, no task work). */
    __u64 end_stacks, end_stacks_lost;
    __u64 naming_refused;       /* naming stacks refused, the budget two seconds in debt */
    __u64 go_reparks;           /* goroutine parks again in one semaphore acquire (go_uprobes.bpf.h) */
    __u64 go_park_reentries;    /* gopark's probe hit again for one park, after morestack (go_uprobes.bpf.h) */
    __u32 spare_slot;           /* slot + 1 taken for a blocker another CPU made first, 0: none */
    __u32 pad_spare;
    __u64 part_runs[PT_PART_COUNT], part_ns[PT_PART_COUNT];   /* PARKTRACE_TIME_PARTS */
};
#define PT_COMM_LEN 16
#define PT_STACK_SAMPLE 8192    /* bytes of user stack copied once per (process, stack) */
#define PT_STACK_CHUNK 512
#define PT_MAX_FRAMES 127
#define PT_MAX_CGROUPS 8      /* --cgroup paths, each a cgroup_filter entry */
#define PT_MAX_SAMPLES 2048   /* stack copies waiting for user space (samples) */

enum pt_kind {
    PT_KIND_FUTEX = 0,
    PT_KIND_JVM_PARK = 1,
    PT_KIND_JVM_MONITOR = 2,
    PT_KIND_JVM_WAIT = 3,
    PT_KIND_GO_PARK = 4,
    PT_KIND_COUNT
};

#include "go.h"

#define PT_PARK_OFFS 4
#define PT_CODE_HEAPS 3          /* HotSpot's segmented code cache has at most 3 heaps */

/* How to find a parked Java thread's blocker in one JVM, from the layout
 * the JVM publishes (read by user space, see user/jvm/jvm_objects.c). */
struct pt_jvm_layout {
    __u64 thread_size;      /* sizeof(JavaThread): the Parker lies inside it */
    __u64 thread_obj;       /* JavaThread::_threadObj + OopHandle::_obj */
    __u64 park_blocker;     /* java.lang.Thread.parkBlocker */
    __u64 oop_base, klass_base;
    __u64 klass;            /* oopDesc's klass field */
    __u32 oop_shift, klass_shift;
    __u32 compressed_oops, compressed_klass;
    /* Its objects move only inside a safepoint (a stop-the-world
     * collector), and its libjvm's safepoints bump safepoint_gen: a park
     * may reuse what it read of the heap until the next (jvm.bpf.h). */
    __u32 stable_oops;
    __u32 pad_stable;
    __u64 osthread;         /* JavaThread::_osthread */
    __u64 os_tid;           /* OSThread::_thread_id */
    /* Where in a JavaThread its park futexes lie (the Parker's condition
     * variables), learnt from recognised parks; lets a thread not yet in
     * java_threads be recognised from its futex address alone. */
    __u64 park_offs[PT_PARK_OFFS];
    __u64 eetop;            /* java.lang.Thread.eetop: the thread's JavaThread* */
    __u64 jni_env;          /* JNIEnv's offset in a JavaThread, learnt by the park uprobe */
    __u64 pending_monitor;  /* JavaThread::_current_pending_monitor (0: unknown) */
    __u64 waiting_monitor;  /* JavaThread::_current_waiting_monitor */
    __u64 monitor_object;   /* ObjectMonitor::_object */
    /* The kernel's stack walk through Java frames (0: unknown). */
    __u64 anchor_sp, anchor_pc, anchor_fp;  /* JavaThread::_anchor's last Java frame */
    __u64 interp_lo, interp_hi;  /* the template interpreter's code */
    __u64 code_lo, code_hi;      /* the code cache */
    __u64 call_stub_ra;          /* StubRoutines::_call_stub_return_address */
    __s32 method_slot;           /* an interpreted frame's Method* at fp + 8 * method_slot */
    __u32 preserve_fp;           /* -XX:+PreserveFramePointer: compiled frames keep rbp */
    /* Compiled frames without rbp: their size, from the code blob holding
     * the pc, found through its code heap's segment map (CodeHeap). */
    struct pt_code_heap {
        __u64 lo, hi;            /* the heap's reserved memory */
        __u64 segmap;            /* one byte per segment: 0 starts a block, else hops back */
        __u32 log2_segment;
        __u32 pad;
    } heaps[PT_CODE_HEAPS];
    __u64 block_header;          /* sizeof(HeapBlock): a block's code blob follows it */
    __u64 blob_frame_size;       /* CodeBlob::_frame_size (int, words), 0: unknown */
    /* AbstractOwnableSynchronizer.exclusiveOwnerThread: a java.util.concurrent
     * lock's owner, for wait chains (0: unknown). */
    __u64 aos_owner;
    /* ObjectMonitor::_owner: a monitor's owning JavaThread (or, while its
     * first owner still holds it as a stack lock, that lock's address on
     * its stack), for wait chains (0: unknown). */
    __u64 monitor_owner;
};

/* Key flags: a shared futex is keyed by (device, inode, offset) instead of
 * (tgid, address) so that every process mapping the word meets on it. */
#define PT_KEY_SHARED 0x100u

/* pt_slot.chain_flags: a Java park blocker that records no owner (not a
 * java.util.concurrent lock): its owner is not read; idle housekeeping
 * (a pool's worker waiting for work): its waits read no chain. */
#define PT_SLOT_NO_OWNER 0x1u
#define PT_SLOT_NO_CHAIN 0x2u

struct pt_blocker_key {
    __u64 addr;       /* uaddr, or byte offset in the file for shared futexes */
    __u64 ino;        /* inode number for shared futexes; a Java object's
                       * raw klass word (jvm kinds); else 0 */
    __u32 owner;      /* tgid, or device number for shared futexes */
    __u32 kind;       /* enum pt_kind | PT_KEY_* flags */
};

/* Ends of a wait, by the way it ended. */
enum pt_end {
    PT_END_WOKEN = 0,
    PT_END_TIMEOUT = 1,
    PT_END_INTERRUPTED = 2,
    PT_END_COUNT
};

struct pt_stack_val {
    __u64 count;
    __u64 ns;
};
/* A (waiter stack, waker stack) pair's waits, weighed twice when stacks
 * are sampled: count and ns by both stacks' odds (the waker's share),
 * line_count and line_ns by the waiter's alone (its own line's share, so
 * that a waiter line's weight does not multiply by its waker's odds). */
struct pt_waker_val {
    __u64 count;
    __u64 ns;
    __u64 line_count;
    __u64 line_ns;
};

/* One blocker's cumulative state. Lives in an mmap-able array so user space
 * reads it without system calls and resets the per-window fields in place.
 * The kernel updates every counter with atomics (no bpf_spin_lock in tracing
 * programs). */
struct pt_slot {
    /* Grouped by how often each line is written: a blocker waited on from
     * two CPUs moves every line both write to at each wait, so the words
     * written at every wait share two lines, and those only read at every
     * wait (written when a maximum rises, or per window) are apart. */
    /* Line 0, written at every wait. Recycling also reads the key, valid,
     * last_ts and parked_now of every slot twenty times a second. */
    struct pt_blocker_key key;
    __u32 valid;            /* 1 once the key -> slot mapping is published;
                             * 2 once user space has begun to take it out */
    __u32 first_tid;
    __u64 last_ts;          /* latest event */
    __s64 parked_now;       /* waiters right now */
    __u64 start_sum;        /* sum of the start times of the waits in progress,
                             * so their time so far is parked_now * now - start_sum */
    __u64 busy_start;       /* when parked_now last went 0 -> 1 */
    /* Line 1, written at every wait's end. */
    __u64 parks;            /* waits completed (any end); begun = parks + parked_now */
    __u64 ends[PT_END_COUNT];
    __u64 thread_ns;        /* full durations of completed waits */
    __u64 real_ns;          /* closed busy periods (parked_now >= 1) */
    __u64 attempts;         /* waits begun, kept only for --threshold */
    __u64 fast_parks;       /* --probes uprobes: parks that returned without sleeping */
    /* Line 2, read at every wait's end, written rarely. */
    __u64 max_ns;           /* longest completed wait, whole run */
    __u64 max_win_ns;       /* longest completed wait since reset */
    __u64 peak;             /* most simultaneous waiters, whole run */
    __u64 peak_win;         /* the same since reset */
    __u64 first_ts;         /* first event on this blocker (ns, CLOCK_MONOTONIC) */
    __u64 win_first_ts;     /* first event since user space last reset it */
    __u32 first_tgid;
    __s32 first_stack;      /* user stack id of the first waiter's first wait */
    __u32 waker_named;      /* 1 once a waker's stack was taken for it (note_waker) */
    __u32 chain_flags;      /* set by user space, PT_SLOT_*: what wait chains read here */
    /* Line 3, cold. */
    union {
        __u64 klass;        /* a Java blocker's Klass*, for its class name */
        __u64 naming_ip;    /* a futex's: its first waiter's user ip when the
                             * stack budget left out its naming stack, so that
                             * its class is read off that one frame */
    };
    char first_comm[PT_COMM_LEN];
    __u64 threads;          /* distinct waiting threads, whole run */
    __u64 threads_win;      /* distinct waiting threads since reset */
    __u32 reuses;           /* blockers this slot held before (kept by user space) */
    __u32 first_tid_gen;    /* window_gen its first waiter was last counted in
                             * (note_thread), 0: never: no thread_seen entry for it */
    __u64 first_uaddr;      /* the address the first waiter passed */
    __u32 second_tid;       /* the second thread to wait, counted here too */
    __u32 second_tid_gen;   /* as first_tid_gen, for it */
    /* Line 4: its first stack_time and waker_time entries of its first
     * waiter's process, kept here (slot_own, slot_pair in slots.bpf.h).
     * Keys: (waiter stack + 1) | (waker stack + 1) << 32; 0: none yet. */
    __u64 own_key, pair_key;
    struct pt_stack_val own;
    struct pt_waker_val pair;
    __u64 hist[PT_HIST_SLOTS] __attribute__((aligned(64)));
} __attribute__((aligned(64)));   /* each slot's first line its own */
_Static_assert(__builtin_offsetof(struct pt_slot, parks) == 64 &&
               __builtin_offsetof(struct pt_slot, max_ns) == 128 &&
               __builtin_offsetof(struct pt_slot, klass) == 192 &&
               __builtin_offsetof(struct pt_slot, own_key) == 256 &&
               __builtin_offsetof(struct pt_slot, hist) == 320, "pt_slot's lines moved");

/* A thread's last user stack id and the registers it was taken with: the
 * same call site with the same frame gives the same stack, so the kernel's
 * stack walk and hashing are skipped when a thread waits (or wakes) again
 * from where it did last time. */
#define PT_CACHE_CHECKS 10
struct pt_stack_cache {
    __u64 ip, sp;          /* ip 0: empty */
    __s32 sid;
    __u32 noted_slot;      /* slot + 1 this stack was last noted for, 0: none */
    /* A kernel-unwound stack also checks words it read (address 0: no
     * check): native return addresses at frames 1 to 6, 8 and 12, and those
     * of the first six Java frames, where a lock's library code meets its
     * callers (an interpreted frame's Method* too). That tells callers apart
     * that reach the same instruction at the same depth. */
    __u64 chk_addr[PT_CACHE_CHECKS], chk_val[PT_CACHE_CHECKS];
    __u32 nchecks;         /* of them, being remembered by a walk */
    __u32 early;           /* walked through Java code before its JVM was known */
    __u32 cut_gen;         /* cut at uncovered code: its process's tables' gen + 1 then, else 0 */
};

/* A Java thread's last park: its JavaThread (0: none), that JavaThread's
 * handle to its java.lang.Thread, and what reading the Thread's
 * parkBlocker needs of its JVM's layout, so that a park on a futex inside
 * the same JavaThread reads no map (jvm.bpf.h). */
struct pt_park_cache {
    __u64 jt, handle, oop_base;
    __u64 thread_size, park_blocker;
    __u32 oop_shift, compressed_oops;
    __u32 gen;             /* layouts_gen when filled */
    __u16 klass, compressed_klass;  /* oopDesc's klass field, and its width */
    /* The rest of the layout a Java wait reads: with them here, a known
     * thread's monitor entries and Object.waits, and a new blocker's class,
     * look up neither java_threads nor jvm_layouts (two hash lookups, a
     * quarter of a microsecond on H2's row locks). */
    __u64 klass_base;
    __u32 klass_shift;
    __u32 pending_monitor, waiting_monitor, monitor_object;   /* 0 pending: unknown */
    /* What its parks read of the heap, kept while no safepoint has passed
     * (oop_gen, safepoint_gen then) in a JVM whose objects move only in
     * one (stable_oops): its java.lang.Thread's address, and the last two
     * blockers and their klass words. Each park then reads one word, its
     * parkBlocker, instead of three. */
    __u32 stable_oops, oop_gen;
    __u64 thread_oop;
    __u64 blocker[2], klass_word[2];
};

/* A CPU's stack budget (stacks.bpf.h): the ns it may still spend, when
 * that was last refilled, and all it was charged (--self-stats). */
struct pt_budget {
    __s64 left;
    __u64 last;
    __u64 spent;
    __s64 lent;     /* of the full bucket it started with, what the refill has not paid back */
    __u32 floor_m;  /* the lowest odds are 1 / floor_m (0: PT_GAP_FLOOR_M; floor_m_of) */
    __u32 pad;
    __u64 floor_at; /* when floor_m last changed */
    __u64 refused;  /* chain_budget: waits that kept their stack but had no chain read, it spent */
};

/* Waits left until the next stack taken, the gap as drawn (its waits
 * are counted when it ends) and the odds it was drawn at (stacks.bpf.h). */
struct pt_gap {
    __u32 left;
    __u32 drawn;
    __u32 odds;
};

#include "chains.h"

/* A thread's wait in progress, in task-local storage: what the end of the
 * wait needs to finish the accounting. */
struct pt_wait {
    /* Grouped by who touches them: the task-local data starts 8 bytes into
     * a cache line, so these 56 bytes share the line the look-up itself
     * reads. A wakeup on another CPU and the switch back in touch nothing
     * else of the waiter's record: each line more is a miss from the other
     * CPU at every round trip. */
    __u64 start_ns;
    __u32 slot;
    __u32 flags;
    __u32 concurrency;     /* waiters on the blocker when this one began */
    __s32 stack_id;        /* the waiter's user stack, when already taken */
    __u32 end;             /* enum pt_end, when known before the wait ends */
    __s32 waker_stack;     /* the user stack of the thread that woke it, or -1 */
    __u32 waker_tgid;
    /* The odds (in 2^-24ths, PT_ODDS_ONE: certain) its stack and its
     * waker's were taken with: over the budget one wait in 2^24 / odds
     * takes its stack, and stands for them all. */
    __u32 odds;
    __u32 waker_odds;
    /* Its thread's waits until the next whose waker takes its own stack,
     * and (below) until the next that takes its stack. */
    struct pt_gap wake_gap;
    /* The next line: the thread's own, as it begins and ends its waits. */
    /* The two slots (+ 1, 0: none) it last waited on, the most recent
     * first (slot_get): a pool's worker alternates between its queue's
     * lock and its condition. The two it was last counted in `threads`
     * for, in window COUNTED_GEN (note_thread). */
    __u32 last_slot[2];
    __u32 counted_slot[2];
    __u32 counted_gen;
    __u32 early_end;                 /* sched probes: a waking seen before the switch */
    __u64 early_sw;                  /* that puts it to sleep: how it ends, its context switches */
    __u64 sleep_start;               /* an idle sleep in progress began then (0: none) */
    struct pt_gap wait_gap;
    __u32 watch_gen;                 /* procs_gen when `watched` was read */
    __u32 watched;                   /* its process is in procs: its idle sleeps count */
    /* Nonzero while chains go through this thread (chain_waiters): its
     * switches re-read them (chains.bpf.h). On this line, which every
     * switch of the thread reads anyway. */
    __u32 chain_waiter;
    /* A Java park's layout, then the stacks' and the waker's bookkeeping. */
    struct pt_park_cache park;
    __u32 wait_mru, wake_mru;        /* the most recent of wait_st, wake_st */
    __s32 wake_seen_stack;           /* waiter stack, process and waker stack */
    __u32 wake_seen_tgid;            /* of the last waker entry made */
    __s32 wake_seen_sid;
    __u32 wake_seen_slot;            /* its slot + 1, 0: none */
    __u32 waker_naming_slot;         /* slot + 1 whose waker is due to be named, where
                                      * this thread's wait had no stack to name it by:
                                      * its next wait there takes one (wait_finish) */
    __u64 nvcsw;           /* --probes uprobes: voluntary switches when the park began */
    /* This thread's last two stacks when it waits, and when it wakes
     * another: a thread alternating between two call paths walks neither
     * again, read only when a stack is taken. */
    struct pt_stack_cache wait_st[2];
    struct pt_stack_cache wake_st[2];
    __u64 klass_posted;    /* the last class this thread asked user space to name (note_klass) */
    /* Its wait's chain (chains.bpf.h): the holder of its futex, read as it
     * began (PT_HOLDER_PRIVATE or'd in; 0: none); with PT_WAIT_CHAIN, the
     * chain as last read, since when it stands, and the chains this wait
     * is counted in already; chain_busy: being re-read or charged. */
    __u32 holder;
    __u32 chain_busy;
    __u64 chain_since;
    __u32 chain_counted[4];   /* digests (chain_digest) of the chains it has been counted in */
    struct pt_chain_key chain;
    __u32 chain_waiters[PT_CHAIN_WAITERS];   /* threads whose chains go through this one (0: none) */
    __u64 chain_reread_ns;                   /* when its switches last re-read them */
    __u64 kstack_ns;                         /* when its kernel stack was last taken in I/O, */
    __u32 kstack;                            /* and its id (chain_kstacks) */
    __u32 kstack_pad;
    /* The threads that last woke this one from its waits on its last four
     * blockers (slot + 1, 0: none; the most recent first): each stands in
     * for a holder where no owner is recorded. Four: a glibc condition
     * variable's waiter sleeps on two futex words in turn, and on its
     * mutex. */
    __u32 waker_slot[4], waker_tid[4];
};
_Static_assert(__builtin_offsetof(struct pt_wait, last_slot) == 56 &&
               __builtin_offsetof(struct pt_wait, park) == 120, "pt_wait's lines moved");
#define PT_WAIT_ACTIVE 0x1u       /* a wait is in progress */
#define PT_WAIT_TIMED 0x2u        /* counted in parked_now and timed */
#define PT_WAIT_OPENED_BUSY 0x4u  /* this wait took parked_now from 0 to 1 */
#define PT_WAIT_UPROBE 0x8u       /* a park timed by the Unsafe_Park uprobes */
#define PT_WAIT_PARK_TIMED 0x10u  /* that park has a timeout */
#define PT_WAIT_WAKER_LOST 0x20u  /* its waker's stack was left out (over budget) */
#define PT_WAIT_END_SEEN 0x40u    /* sched probes: its end was decided by its waking */
#define PT_WAIT_WAKER_NAMING 0x80u /* its waker names its blocker's (note_waker): kept whole */
#define PT_WAIT_CHAIN 0x100u      /* its chain is kept (chains.bpf.h) */
/* Waits a blocker has had before its waker is named outside the gap: a
 * per-transaction object, waited on once or twice, never is. */
#define PT_WAKER_NAMING_PARKS 16
#define PT_ODDS_ONE (1u << 24)
/* Stacks over the budget: one wait in m takes its stack, m at most the
 * CPU's floor, PT_GAP_FLOOR_M, raised (doubled, up to PT_GAP_MAX_M) while
 * the budget is in debt; the gaps are geometric (stacks.bpf.h,
 * user/sources/gap_tables.c). At 1/64 alone, a load of 37 000 waits a
 * second a CPU (HSQLDB's) outran a 0.5% budget, sat a second in debt and
 * spent 10% over it; a fixed 1/4096 gave weights so uneven that a Java
 * two-path lock's shares at 0.1% swung 20 points. */
#define PT_GAP_FLOOR_M 64
#define PT_GAP_MAX_M 4096
/* Waits this long or longer are kept by a coin thrown as they end, their
 * stack taken then if their start left it out (slots.bpf.h, end_stacks.bpf.h). */
#define PT_LONG_WAIT_NS 1000000ull
#define PT_GAP_FRAC 256
#define PT_GAP_SCALES 128     /* m below it from a table (masked indices); above, m - 1/2 */

/* --probes uprobes: the last Unsafe.unpark of a thread, until its park ends. */
struct pt_pending_waker {
    __s32 stack_id;
    __u32 tgid;           /* 0: none */
};

/* (slot, tid) -> window generation in which the thread last waited. */
struct pt_thread_key {
    __u32 slot;
    __u32 reuses;     /* the slot's, so a recycled slot's old entries never match */
    __u32 tid;
};

/* Time and count per (blocker, waiter stack), for collapsed stacks. */
struct pt_stack_key {
    __u32 slot;
    __s32 stack_id;
    __u32 tgid;       /* shared futexes have waiters in several processes */
    __u32 pad;
};

/* Time and count per (blocker, waiter stack, waker stack): where a wait
 * occurred and which code ended it by waking the waiter. */
struct pt_waker_key {
    __u32 slot;
    __s32 stack_id;       /* the waiter's */
    __u32 tgid;           /* the waiter's process */
    __s32 waker_stack;
    __u32 waker_tgid;
};

/* A copy of the user stack and registers, taken once per (blocker, process,
 * stack id) so user space can unwind through code without frame pointers.
 * The blocker is part of the key because a frame-pointer walk that stops in
 * libc gives different call paths the same stack id. */
struct pt_sample_key {
    __u32 slot;
    __u32 tgid;
    __s32 stack_id;
};
struct pt_sample {
    __u64 ip, sp, bp;
    __u32 tid;
    __u32 len;
    __u8 data[PT_STACK_SAMPLE];
};

/* What the `sample_ready` ring says to user space about process tgid. */
enum pt_ready_what {
    PT_READY_SAMPLE = 0,    /* a new stack copy waits in `samples` */
    PT_READY_UNWIND = 1,    /* the process waits for its unwind tables */
    PT_READY_STACK = 2,     /* a new kernel-unwound stack with Java frames, to name now */
    PT_READY_KLASS = 3,     /* a Java class new to a thread's blockers, to name while its JVM runs */
};
struct pt_ready {
    __u32 what;
    __u32 tgid;
    __s32 stack_id;         /* PT_READY_STACK */
    __u32 pad;
    __u64 klass;            /* PT_READY_KLASS: its Klass* */
};

/* A process's threads, for the thread time it was alive: at time t,
 * threads * t - births_ns + deaths_ns (sums of the threads' birth and death
 * times; threads alive when user space registered it count as born then). */
struct pt_proc {
    __s64 threads;
    __u64 births_ns;
    __u64 deaths_ns;
    /* Idle sleeps (metrics.md, CSP's working time: an interruptible sleep
     * outside a futex wait), kept the same way: slept(t) = slept_ns +
     * sleepers * t - sleep_starts_ns. */
    __s64 sleepers;
    __u64 sleep_starts_ns;
    __u64 slept_ns;
};

/* ---- Stacks unwound in the kernel from DWARF call-frame information ----
 * User space turns each binary's CFI (.eh_frame, .debug_frame) into rows,
 * one per address range with the same rule: where the canonical frame
 * address (CFA) is and where the caller's rbp was saved. The return address
 * is always at CFA - 8 on x86-64. A binary's table is one array map of
 * 8-byte entries: entry 0 a header, then one page-index entry per 4 KiB
 * page of its code, then the rows sorted by pc. */
#define PT_UNWIND_PAGE_SHIFT 12
#define PT_UNWIND_MAPS 64          /* executable file mappings per process */
#define PT_UNWIND_BINS 4096        /* distinct binaries with tables */
#define PT_USTACK_ID 0x40000000    /* stack ids of kernel-unwound stacks have this bit */
#define PT_USTACK_TRUNCATED 0x1u   /* the walk stopped before the thread's first frame */
#define PT_USTACK_EARLY 0x2u       /* Java code met before the JVM or its code cache was known */
#define PT_USTACK_UNCOVERED 0x4u   /* cut at code no table covers (yet?): walked again once the tables change */
/* An interpreted Java frame is kept as its Method*, marked by this bit (user
 * addresses never have it). */
#define PT_FRAME_METHOD (1ull << 63)

enum pt_cfa_kind {
    PT_CFA_END = 0,      /* return address undefined: the outermost frame */
    PT_CFA_RSP = 1,      /* CFA = rsp + off */
    PT_CFA_RBP = 2,      /* CFA = rbp + off */
    PT_CFA_PLT = 3,      /* a PLT entry: CFA = rsp + 8, + 8 more from byte 11 of its 16 */
    PT_CFA_NONE = 4,     /* no CFI covers this pc, or a rule the walker cannot follow */
};

struct pt_urow {
    __u32 pc;            /* first file virtual address the rule holds for */
    __u16 cfa_words;     /* CFA offset from its register, in 8-byte words */
    __u8 kind;           /* enum pt_cfa_kind */
    __s8 rbp_words;      /* caller's rbp saved at CFA + 8 * rbp_words; 0: rbp unchanged */
};

/* Entry 0 of a binary's table (same 8 bytes as a row). */
struct pt_utable_head {
    __u32 first_page;    /* pc >> PT_UNWIND_PAGE_SHIFT of the first row */
    __u32 npages;        /* page-index entries that follow */
};

/* Page-index entry i (table entry 1 + i): rows for pcs in page first_page + i
 * lie at row indices [lo, hi] (lo: the row in force at the page's start;
 * indices count from the first row, table entry 1 + npages). */
struct pt_upage {
    __u32 lo, hi;
};

/* One executable file mapping of a process: pc - bias is the file's
 * virtual address; bin indexes the table map (PT_UNWIND_BINS). */
struct pt_umap {
    __u64 start, end, bias;
    __u32 bin;
    __u32 pad;
};

/* A process's mappings with tables, sorted by start. n == 0: walk this
 * process by frame pointers only (no CFI found). */
#define PT_UPROC_JVM 0x1u     /* its code cache is walked as Java frames */
struct pt_uproc {
    __u32 n;
    __u32 flags;          /* PT_UPROC_* */
    __u32 gen;            /* changes at each publishing: a stack cut short may walk further now */
    struct pt_umap m[PT_UNWIND_MAPS];
};

/* A stack unwound in the kernel, innermost first; every pc after the first
 * is a return address. */
struct pt_ustack {
    __u64 hash;          /* of the frames, to tell two stacks with one id apart */
    __u32 nr;
    __u32 flags;         /* PT_USTACK_* */
    __u64 ip[PT_MAX_FRAMES];
};

/* Drop counters, indices into the BSS array drops[]. */
enum pt_drop {
    PT_DROP_BLOCKERS = 0,   /* blocker table full: wait not recorded */
    PT_DROP_WAITING,        /* a thread's wait record: no memory, or its end was lost */
    PT_DROP_THREADS,        /* thread set full: `threads` undercounts */
    PT_DROP_STACKAGG,       /* per-stack table full: collapsed output short */
    PT_DROP_STACKS,         /* stack map full or collision */
    PT_DROP_SAMPLES,        /* stack sample table full */
    PT_DROP_EXECS,          /* exec queue full: a new JVM may be found late */
    PT_DROP_LIVES,          /* unwatched_life full: a thread's life before its process was watched */
    PT_DROP_CHAINS,         /* chain table full, or a chain's part met its holder's re-read: not charged */
    PT_DROP_COUNT
};

#endif
