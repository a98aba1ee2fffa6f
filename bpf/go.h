/* Goroutine parks (kind go-park): what the kernel (go_uprobes.bpf.h) and
 * user space (user/golang) share of them; included by parktrace.h. */
#ifndef PT_GO_H
#define PT_GO_H

/* What a goroutine parked for (go_uprobes.bpf.h), in a go-park key's ino:
 * the runtime's own waitReason numbers change between Go versions. */
enum pt_go_wait {
    PT_GO_SEMA = 1,         /* a runtime semaphore: sync.Mutex, RWMutex, WaitGroup */
    PT_GO_COND = 2,         /* sync.Cond.Wait */
    PT_GO_RECV = 3,         /* chan receive */
    PT_GO_SEND = 4,         /* chan send */
    PT_GO_SELECT = 5,       /* select, keyed by its call site */
    PT_GO_WAIT_COUNT
};

/* How to read one Go process's parks (user/golang/go_binary.c): offsets
 * and the runtime's waitReason numbers, from its DWARF or its version. */
struct pt_go_layout {
    __u32 goid;             /* runtime.g.goid */
    __u32 chan_lock;        /* runtime.hchan.lock: a channel is &c.lock less it */
    __u32 cond_lock;        /* sync.Cond.notify + notifyList.lock */
    __u8 reason[PT_GO_WAIT_COUNT];  /* waitReason of each pt_go_wait (0: none) */
    __u8 pad[2];
};

/* A goroutine's wait record in go_waits: its g, in its process. */
struct pt_go_key {
    __u64 g;
    __u32 tgid;
    __u32 pad;
};

#endif
