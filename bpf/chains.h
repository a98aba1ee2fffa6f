/* The wait chains' structures shared by the kernel (chains.bpf.h) and
 * user space (user/kernel/chain_map.c, user/sources/collect_chains.c);
 * included by parktrace.h, before the wait record that holds a chain. */
#ifndef PT_CHAINS_H
#define PT_CHAINS_H

/* Wait chains (docs/contract/metrics.md, "Wait chains"; chains.bpf.h): a
 * waiting thread, the holder of what it waits on, what that holder waits
 * on and its holder, and so on, PT_CHAIN_DEPTH holders deep, and how the
 * last one stood. tid[0] waits on slot[0], held by tid[1], which waits on
 * slot[1] (when depth > 1) ... tid[depth] is the last link, its state
 * `end`. */
#define PT_CHAIN_DEPTH 4
#define PT_CHAIN_WAITERS 4   /* chains a holder's switches re-read, at most */
enum pt_chain_end {
    PT_CHAIN_RUNNING = 0,   /* on a CPU */
    PT_CHAIN_RUNNABLE,      /* on a run queue */
    PT_CHAIN_SLEEPING,      /* asleep on nothing parktrace names */
    PT_CHAIN_IO,            /* uninterruptible (task state D) */
    PT_CHAIN_CYCLE,         /* the last link's holder is an earlier link */
    PT_CHAIN_UNKNOWN,       /* no holder known, gone, or deeper than followed */
    PT_CHAIN_END_COUNT
};
struct pt_chain_key {
    __u32 tid[PT_CHAIN_DEPTH + 1];    /* host thread ids */
    __u32 tgid[PT_CHAIN_DEPTH + 1];
    __u32 slot[PT_CHAIN_DEPTH + 1];   /* + 1 (0: none): what tid[i] waits on, i < depth (and the last, waiting deeper) */
    __u32 depth;                      /* holders followed: 0 (none known) .. PT_CHAIN_DEPTH */
    __u32 end;                        /* enum pt_chain_end */
    __u32 cycle_to;                   /* PT_CHAIN_CYCLE: the link tid[depth]'s holder is */
    __u32 end_kstack;                 /* PT_CHAIN_IO: the last link's kernel stack (chain_kstacks), 0: none */
    __u32 via_waker;                  /* bit i: tid[i + 1] is tid[i]'s last waker there, not an owner */
};
/* A kernel stack where a chain's last link sleeps in I/O, innermost first. */
#define PT_CHAIN_KFRAMES 24
struct pt_chain_kstack {
    __u64 ip[PT_CHAIN_KFRAMES];
};
struct pt_chain_val {
    __u64 ns;       /* waiting time charged to the chain (weighed, as stacks are) */
    __u64 waits;    /* waits that gave it any time (weighed) */
};
/* A thread of a chain's name (chain_comms). */
struct pt_chain_comm {
    char comm[16];
};
/* A futex wait's holder, as read at its start: a host tid, with this bit
 * when the futex is private (its holder must then be of the same process). */
#define PT_HOLDER_PRIVATE 0x80000000u
/* In a record's waker_tid: that waker is not the one before it there. */
#define PT_WAKER_SWITCHED 0x80000000u

#endif
