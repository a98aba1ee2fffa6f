/* What the kernel keeps of the JVMs parktrace follows: each JVM's layout
 * (jvm_layouts), each Java thread's JavaThread* (java_threads), and the
 * processes JVM discovery looks at (the traced children of a COMMAND, the
 * programs that exec'd). The only code that touches those maps;
 * jvm_tracker.c asks it. */
#ifndef PT_JVM_MAPS_H
#define PT_JVM_MAPS_H
#include <stdbool.h>
#include <stdint.h>
#include "../bpf/parktrace.h"

struct tracer;

/* Sets JVM PID's layout (only when it has one already, with
 * MUST_EXIST); its threads drop the layout their last park cached. False
 * when the map refused it. */
bool jvm_maps_set_layout(struct tracer *t, int pid, const struct pt_jvm_layout *kl, bool must_exist);
bool jvm_maps_get_layout(struct tracer *t, int pid, struct pt_jvm_layout *out);
void jvm_maps_drop_layout(struct tracer *t, int pid);

/* Thread TID is a Java thread at THREAD (its JavaThread*). */
void jvm_maps_set_thread(struct tracer *t, int tid, uint64_t thread);
void jvm_maps_drop_thread(struct tracer *t, int tid);

/* The traced process after PREV (NULL: the first) into *NEXT; false after
 * the last. */
bool jvm_maps_next_traced(struct tracer *t, const uint32_t *prev, uint32_t *next);
/* A process that exec'd since the last call, taken from the kernel's queue;
 * false when none is left. */
bool jvm_maps_take_exec(struct tracer *t, uint32_t *pid);

#endif
