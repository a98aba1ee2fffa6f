/* Unwinds a copied user stack with the binaries' DWARF call-frame
 * information (elfutils libdwfl), so stacks pass through code built without
 * frame pointers such as Debian's libc. */
#ifndef PT_UNWIND_H
#define PT_UNWIND_H
#include <stdint.h>
#include "../bpf/parktrace.h"

/* Fills PCS (innermost first; every pc after the first is a return
 * address) from the sample of process PID. Returns the number of frames. */
int unwind_sample(int pid, const struct pt_sample *smp, uint64_t *pcs, int max);

void unwind_free_all(void);

#endif
