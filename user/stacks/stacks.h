/* Waiter stacks: kernel stack ids turned into named frames. A stack comes
 * from the CFI unwind of its copied sample when there is one, else from the
 * kernel's frame-pointer walk. Results are cached per (blocker, process,
 * stack id) in a struct stacks, made and freed by its owner (main.c) and
 * used by the collector: a service, calling nothing above it. */
#ifndef PT_STACKS_H
#define PT_STACKS_H
#include <stdbool.h>
#include <stdint.h>
#include "frames.h"
#include "symbolize.h"

struct pt_sample;

/* Names a Java frame: the Java name of the frame at PC (frame pointer FP,
 * in stack copy SMP, both may be 0/NULL) of process PID into OUT; false
 * when PC is not Java code of a JVM the namer knows. PC PT_FRAME_METHOD
 * alone (no Method*) asks whether PID is a live JVM the namer follows.
 * The JVM tracker's, given by the caller, so that stacks need not know of
 * it. Stacks with frames it did not take (their JVM was not known yet,
 * JIT code not yet in its perf map) are named again as it learns more. */
struct stacks_java_namer {
    void *ctx;
    bool (*name)(void *ctx, int pid, uint64_t pc, uint64_t fp, const struct pt_sample *smp, char *out,
                 size_t len);
};

struct stacks;
struct pt_services;
struct stack_maps;

/* A stack cache over the kernel's maps of stacks, with who names Java
 * frames (NAMER may be NULL: then no frame is Java). */
struct stacks *stacks_new(const struct stack_maps *kernel, const struct stacks_java_namer *namer,
                          struct pt_services *sv);

/* Counts the waiter stacks the kernel has made entries for in its
 * stack_time table (one per blocker, process and call path) since the last
 * tally. */
void stacks_tally(struct stacks *s);
/* The stacks tallied over the run so far, and how many were cut short. */
void stacks_tallied(const struct stacks *s, uint64_t *stacks, uint64_t *truncated);

/* Kernel-unwound stacks that the kernel's table let go before they were
 * copied: shown as [truncated], counted in dropped_stacks. */
uint64_t stacks_lost(const struct stacks *s);

/* What the cache holds: entries, those of them that are a process's copy of
 * a kernel-unwound stack, and the bytes of their pcs and names. */
void stacks_usage(const struct stacks *s, size_t *entries, size_t *templates, size_t *bytes);

/* Takes new stack copies from the kernel, unwinds them while their
 * processes are alive, and frees the kernel's copy. Stops once
 * monotonic_ns() passes DEADLINE (0: none), leaving the rest in the
 * kernel's table: true when it did, so that the caller can let other work
 * (recycling) run before it calls again. */
bool stacks_poll_samples(struct stacks *s, uint64_t deadline);

/* The named stack STACK_ID of a waiter in process TGID on blocker SLOT; an
 * empty stack when unknown. */
const struct pt_stack *stacks_resolve(struct stacks *s, uint32_t slot, int tgid, int stack_id);

/* The innermost application frame; else the innermost frame outside the C
 * runtime (a JVM-internal wait); else the innermost frame. */
const char *stacks_top_frame(const struct pt_stack *st);

/* The first stack id seen on blocker SLOT in process TGID whose
 * application frames read the same as STACK_ID's: one call path can have
 * several ids (a Java method interpreted, then compiled with its callees
 * inlined; a wait before the unwind tables came), and figures per call
 * path add them up. */
int stacks_canonical(struct stacks *s, uint32_t slot, int tgid, int stack_id);

/* A new kernel-unwound stack with Java frames: named now, while its JVM
 * runs and its JIT code is in the perf map. */
void stacks_name_kernel_stack(struct stacks *s, int tgid, int stack_id);

/* Lets go of the entries of the N blocker SLOTS that were recycled (and
 * their call-path marks), which GONE (with CTX) says too: their stacks live
 * on as the retired blockers' own copies. A kernel-unwound stack's
 * per-process copy stays. */
void stacks_forget_slots(struct stacks *s, bool (*gone)(void *ctx, uint32_t slot), void *ctx, const uint32_t *slots,
                         uint32_t n);

/* Up to MAX processes that have entries here and have exited, into TGIDS;
 * how many. */
int stacks_dead_processes(const struct stacks *s, int *tgids, int max);

/* Lets go of every entry of process TGID (its copies of kernel-unwound
 * stacks too): for an exited process no live blocker names. */
void stacks_forget_process(struct stacks *s, int tgid);

/* Lets go of the templates of kernel-unwound stacks (one per process and
 * stack) that no blocker's entry has named for a minute, at most every
 * 10 s (NOW, CLOCK_MONOTONIC); those the kernel's table no longer holds
 * are kept as pcs alone (8 192 at most). How many went over the run, and
 * how many are kept so. */
void stacks_trim_templates(struct stacks *s, uint64_t now);
uint64_t stacks_templates_trimmed(const struct stacks *s);
int stacks_templates_compact(const struct stacks *s);

/* Frees S and every stack it named. */
void stacks_free(struct stacks *s);

#endif
