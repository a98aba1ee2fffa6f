/* Unwinds a copied user stack with the binaries' DWARF call-frame
 * information (elfutils libdwfl), so stacks pass through code built without
 * frame pointers such as Debian's libc. */
#ifndef PT_UNWIND_H
#define PT_UNWIND_H
#include <stdbool.h>
#include <stdint.h>
#include "../bpf/parktrace.h"

struct procmaps;
struct unwinder;

/* The libdwfl unwinders of the processes whose stack copies are unwound
 * here, a bounded number of them; made and freed by the services
 * (services.h). */
struct unwinder *unwinder_new(struct procmaps *maps);
void unwinder_free(struct unwinder *u);

/* Fills PCS (innermost first; every pc after the first is a return
 * address) from the sample of process PID, and FPS (when not NULL) with each
 * frame's rbp, 0 when unknown. Code without CFI, such as JIT-compiled Java,
 * is walked by its frame pointers. Returns the number of frames; *TRUNCATED
 * says whether the walk stopped before the thread's outermost frame. */
int unwind_sample(struct unwinder *u, int pid, const struct pt_sample *smp, uint64_t *pcs, uint64_t *fps, int max,
                  bool *truncated);

/* Forgets PID's unwinder and the ELF files it keeps mapped (with the
 * kernel's walk, a process is unwound here only until its tables exist). */
void unwind_release(struct unwinder *u, int pid);

#endif
