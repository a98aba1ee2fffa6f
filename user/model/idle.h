/* Idle housekeeping: a runtime's service threads and pool workers waiting
 * for work, which is not contention (metrics.md, "The default view"). */
#ifndef PT_IDLE_H
#define PT_IDLE_H
#include <stdbool.h>

#include "frames.h"
#include "symbolize.h"   /* PT_JAVA_MODULE */

/* Whether the waiter stack FRAMES (innermost first, N of them) waits for
 * work: a known wait-for-work frame (a pool worker waiting for a task, a
 * runtime service loop, a Java Thread.sleep) anywhere in it; or, when WHOLE (the walk reached
 * the thread's start), a HotSpot thread that never called into Java (GC,
 * compiler and VM threads). */
bool idle_stack(const struct pt_frame *frames, int n, bool whole);

#endif
