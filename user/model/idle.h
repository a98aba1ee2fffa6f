/* Idle housekeeping: a runtime's service threads and pool workers waiting
 * for work, which is not contention (metrics.md, "The default view"). */
#ifndef PT_IDLE_H
#define PT_IDLE_H
#include <stdbool.h>

#include "frames.h"

/* What the waiter stack FRAMES (innermost first, N of them) says of idleness.
 * PT_IDLE_WAIT: a wait there waits for work: a known wait-for-work frame (a
 * pool worker waiting for a task, a runtime service loop, a Java
 * Thread.sleep) anywhere in it. PT_IDLE_RUNTIME (with PT_IDLE_WAIT): the
 * thread is a HotSpot thread that never calls into Java (GC, compiler and VM
 * threads: a service loop in the stack, or, when WHOLE, the walk reached the
 * thread's start with no Java frame), or a Go runtime thread with nothing to
 * run, so even its locks are the runtime's housekeeping, not the program's
 * contention. */
enum { PT_IDLE_WAIT = 1, PT_IDLE_RUNTIME = 2 };
unsigned idle_stack(const struct pt_frame *frames, int n, bool whole);

#endif
