/* Building a binary's unwind rows in a child process, for binaries a user
 * could have written: libdw's CFI interpreter takes as much memory as a
 * register number in the CFI asks for (2^28 registers: gigabytes), its
 * time grows with the square of an FDE's rows (a user's FDE of 100 000
 * rows takes it seconds), and a crash or a spin in it would otherwise be
 * parktrace's. The child runs under memory and CPU limits, and the
 * parent never waits for it: it asks, between its other work, whether
 * the rows are there. When the child fails, the binary has no table. */
#ifndef PT_UNWIND_ISOLATED_H
#define PT_UNWIND_ISOLATED_H
#include <stdint.h>

#include "safe_open.h"
#include "unwind_rows.h"

struct isolated_build;

/* Starts building the rows of the file open at F in a child; NULL when no
 * child could be made. F's descriptor stays the caller's to close. */
struct isolated_build *isolated_build_start(const struct file_ref *f);

/* What the child has sent so far, read without blocking: 1 when the rows
 * are in OUT, 0 while the child works, -1 when it failed or ran out of
 * time (its wall-clock limit). On 1 and -1, B is freed and *COST_NS is
 * what the build cost its file's owner: its wall time (once the child has
 * replied, the child's own clock over the build and twice the parent's
 * fork(), for the fork and the child's exit) less the time it was runnable
 * but not run (the child runs niced below the workloads: on a busy host
 * its wall time is mostly other programs' doing; its CPU and its blocking
 * on a slow file are its owner's). */
int isolated_build_poll(struct isolated_build *b, struct unwind_rows *out, uint64_t *cost_ns);

/* The descriptor the child's reply arrives on, for poll(2). */
int isolated_build_fd(const struct isolated_build *b);

/* Stops B's child and frees B. */
void isolated_build_cancel(struct isolated_build *b);

#endif
