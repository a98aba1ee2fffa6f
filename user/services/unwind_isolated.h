/* Building a binary's unwind rows in a child process, for binaries a user
 * could have written: libdw's CFI interpreter takes as much memory as a
 * register number in the CFI asks for (2^28 registers: gigabytes), and a
 * crash or a spin in it would otherwise be parktrace's. The child runs
 * under memory and CPU limits; when it fails, the binary has no table. */
#ifndef PT_UNWIND_ISOLATED_H
#define PT_UNWIND_ISOLATED_H

#include "safe_open.h"
#include "unwind_rows.h"

/* unwind_rows_build_ref(F, OUT) in a child; 0, or -1 (nothing allocated). */
int unwind_rows_build_isolated(const struct file_ref *f, struct unwind_rows *out);

#endif
