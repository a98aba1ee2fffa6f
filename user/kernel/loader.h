/* Loads and attaches the BPF programs, and exposes their maps: the source
 * of every figure, calling nothing above it (what the kernel asks for
 * reaches the services through the handler given to
 * tracer_sample_ready_drain). */
#ifndef PT_LOADER_H
#define PT_LOADER_H
#include <stdbool.h>
#include <stdint.h>
#include "../bpf/parktrace.h"
#include "options.h"

struct parktrace_bpf;

struct bpf_link;
struct ring_buffer;

#define TRACER_MAX_JVMS 32
#define TRACER_MAX_GO_FILES 64
#define TRACER_MAX_LINKS (4 * TRACER_MAX_JVMS + 3 * TRACER_MAX_GO_FILES)

struct tracer {
    struct parktrace_bpf *skel;
    struct pt_slot *slots;     /* the kernel's blocker array, mmapped */
    size_t slots_len;          /* the range reserved for it, */
    size_t slots_mapped;       /* its first bytes mapped (tracer_map_slots) */
    int slots_fd;
    unsigned slots_map_failed;
    uint32_t nslots;
    uint64_t *free_ring;       /* the kernel's ring of slots given back, mmapped */
    size_t free_ring_len;
    /* --probes uprobes: the probes on each distinct libjvm */
    struct bpf_link *links[TRACER_MAX_LINKS];
    int nlinks;
    /* Files given uprobes, once each by device and inode (one file seen
     * through several paths, as containers show it, is probed once):
     * result is what its tracer_attach_* returned. */
    struct tracer_probed_file {
        uint64_t dev, ino;
        int result;
    } jvm_files[TRACER_MAX_JVMS], go_files[TRACER_MAX_GO_FILES];
    int njvm_files, ngo_files;
    struct ring_buffer *sample_ready;   /* new stack samples, to unwind at once */
    const struct tracer_ready *on_ready;   /* while draining it */
    int procs_fd, uncounted_fd, unwatched_life_fd, exited_life_fd;
    int ustacks_fd;                     /* kernel-unwound stacks by id */
    int unwind_bins_fd, unwind_procs_fd; /* the CFI unwind tables (--unwind cfi) */
    bool idle_sleeps;                   /* sched_switch measures idle sleeps (CSP's working time) */
    bool stacks_sampled;                /* --stacks sampled: walks within a budget (else every one) */
    int chain_time_fd, chain_comms_fd, chain_kstacks_fd;
    int stack_time_fd, waker_time_fd, stacks_fd, samples_fd, traced_fd, jvm_layouts_fd, java_threads_fd, execs_fd;
    int go_layouts_fd;
};

/* Loads the programs and maps, not yet attached. Returns 0, or -1 after
 * printing one line saying what failed. FOLLOW traces the children of
 * traced processes. */
int tracer_open(struct tracer *t, const struct pt_options *o, bool follow);

/* Attaches the probes: the last step before the main loop, so that the
 * collector recycles the kernel's tables from the first events on, not
 * after the start-up's JVM discovery and table building. 0, or -1 after
 * one line. */
int tracer_attach(struct tracer *t);

/* Adds a process to the in-kernel filter. */
int tracer_add_pid(struct tracer *t, int pid);

/* After a JVM's layout is added, changed or removed: threads drop the
 * layout their last park cached in the kernel. */
void tracer_layouts_changed(struct tracer *t);

/* The kernel's procs_gen, bumped when procs or uncounted gain an entry. */
volatile uint32_t *tracer_procs_gen(struct tracer *t);
/* The count of unwind-table changes (the programs' row cache). */
volatile uint32_t *tracer_unwind_gen(struct tracer *t);

/* Number of slots the kernel has handed out (valid or not), all mapped
 * by the time it returns (fewer, said once, if the mapping failed). */
uint32_t tracer_used_slots(struct tracer *t);
bool tracer_map_slots(struct tracer *t, uint32_t n);
uint64_t tracer_drop(const struct tracer *t, int which);
/* The kernel's per-CPU hot counters, summed over the CPUs (zeros when they
 * cannot be read). */
void tracer_hot_counts(const struct tracer *t, struct pt_hot_counts *sum);

/* The most work (ns) a budget charged one CPU over the run, the stacks'
 * or (CHAINS) the wait chains': 0 without a budget (--stacks all). */
uint64_t tracer_budget_spent_max(const struct tracer *t, bool chains);
/* Waits that kept their stack but had no chain read: the chains' budget spent. */
uint64_t tracer_chains_unread(const struct tracer *t);

/* The run's start (CLOCK_MONOTONIC), from which the kernel counts lives. */
void tracer_set_run_start(struct tracer *t, uint64_t now);
/* Starts a new window at NOW for the kernel's per-window thread counting. */
void tracer_start_window(struct tracer *t, uint64_t now);

/* Puts the JVM's uprobes on the libjvm open at FD (LIBJVM is its path, for
 * messages), once per file, for every process that maps it: thread start,
 * safepoints (parks timed from the scheduler), and with --probes uprobes
 * park and unpark. 1 when the file's safepoints are probed, 0 when not, or
 * -1 after saying why in one line. */
int tracer_attach_jvm(struct tracer *t, int fd, const char *libjvm);
/* Puts the goroutine park probes on the Go program open at FD (EXE: its
 * name, for messages), once per file, at OFFSET: runtime.semacquire1's,
 * gopark's and goready's file offsets. 0, or -1 when it cannot be. */
int tracer_attach_go(struct tracer *t, int fd, const char *exe, const uint64_t offset[3]);

/* What the kernel asks user space for at once, through its ready ring. */
struct tracer_ready {
    void *ctx;
    /* Process TGID waits with no unwind tables: make them now. */
    void (*unwind)(void *ctx, int tgid);
    /* A new kernel-unwound stack of TGID: name its Java frames now, while
     * the JVM runs. */
    void (*stack)(void *ctx, int tgid, int stack_id);
    /* A Java class (its Klass*) new to a thread's blockers in JVM TGID:
     * name it now, while the JVM runs. */
    void (*klass)(void *ctx, int tgid, uint64_t klass);
};

/* A descriptor that polls readable when new stack samples wait, and the
 * call that clears it, handing each request to ON. */
int tracer_sample_ready_fd(const struct tracer *t);
void tracer_sample_ready_drain(struct tracer *t, const struct tracer_ready *on);

/* Detaches every probe and frees every map. */
void tracer_close(struct tracer *t);

#endif
