/* Finds the JVMs among the traced processes and keeps the kernel's view of
 * them current: each JVM's object layout, and which thread is which
 * JavaThread. Also names the blockers' classes. */
#ifndef PT_JVM_TRACKER_H
#define PT_JVM_TRACKER_H
#include <stddef.h>
#include <stdint.h>
#include "../bpf/parktrace.h"
#include "loader.h"
#include "options.h"

/* The tracker's state: made and freed by its owner (main.c), given to the
 * collector (class names) and the stack cache's Java namer. */
struct jvm_tracker;
struct pt_services;

/* NULL after one line when out of memory. */
struct jvm_tracker *jvm_tracker_new(struct tracer *t, const struct pt_options *o, struct pt_services *sv);

/* PID has exited and nothing it left needs naming any more (its blockers
 * retired, its stacks forgotten): its JVM, if it was one, is let go. */
void jvm_tracker_process_gone(struct jvm_tracker *jt, int pid);
/* Looks for new JVMs and refreshes the thread lists of known ones. */
void jvm_tracker_tick(struct jvm_tracker *jt);

/* The program open at FD (NAME: for messages) that the command PID, held
 * before its exec, will run: a Go program is read and probed now
 * (go_tracker_look_file), so its first park is seen. */
void jvm_tracker_look_program(struct jvm_tracker *jt, int pid, int fd, const char *name);

/* Only the discovery, and only among processes named with -p or started
 * with -- COMMAND: cheap enough to run between ticks, so a JVM started by
 * parktrace is found within moments of mapping libjvm. */
void jvm_tracker_discover_named(struct jvm_tracker *jt);

/* Whether the kernel walks the Java frames of live JVM PID: its unwind
 * tables were published again once the JVM was known (the last step of
 * finding it; until then its stacks come back with their Java frames
 * unnamed). */
bool jvm_tracker_walks_java(const struct jvm_tracker *jt, int pid);

/* The Java name of class KLASS in process PID, and its superclasses (as
 * jvm_klass_supers writes them) into SUPERS; false when unknown. */
bool jvm_tracker_class(struct jvm_tracker *jt, int pid, uint64_t klass, char *name, size_t len, char *supers,
                       size_t slen);

/* The Java name of the frame at PC (frame pointer FP, in stack copy SMP)
 * of JVM PID; false when PC is not Java code of a tracked JVM. A JVM that
 * exited (or was given up on) still names its code from what was kept (its
 * code cache's ranges, its last perf map, the method names read), unless
 * its pid is another process's now. PC PT_FRAME_METHOD alone (no Method*)
 * asks whether PID is a live tracked JVM: true when it is. */
bool jvm_tracker_frame_name(struct jvm_tracker *jt, int pid, uint64_t pc, uint64_t fp, const struct pt_sample *smp,
                            char *out, size_t len);

/* What the tracker had to leave out: a user can start processes that fill
 * its tables, so nothing is dropped without being counted here. */
struct jvm_tracker_stats {
    int tracked;                  /* JVMs tracked now */
    int entries;                  /* table entries ever used (130 KiB each) */
    uint64_t evicted;             /* live JVMs dropped for another (table or user share full) */
    uint64_t given_up;            /* live JVMs whose thread list could not be believed */
    uint64_t lists_unread;        /* refreshes that kept the threads last read: the list read failed */
    uint64_t threads_refused;     /* Java threads over their user's share of the kernel's map */
    uint64_t candidates_evicted;  /* processes dropped unexamined from a full candidate table */
    uint64_t probes_refused;      /* libjvm files left unprobed: their owner had their share */
    uint64_t heap_reads_kept;     /* JVMs whose parks reuse their heap reads between safepoints */
    uint64_t code_ranges_late;    /* JVMs whose interpreter and code cache were read after they were found */
    /* Go programs among the processes looked at (go_tracker.h). */
    uint64_t go_processes, go_unsupported, go_refused;
};

void jvm_tracker_stats(const struct jvm_tracker *jt, struct jvm_tracker_stats *s);

/* Frees JT (NULL is fine). */
void jvm_tracker_free(struct jvm_tracker *jt);

#endif
