/* The kernel's CFI unwind tables (--unwind cfi): one array of rows per
 * binary (unwind_bins, an array of maps) and each process's list of
 * mappings into them (unwind_procs). The only code that touches those
 * maps; unwind_tables.c decides what goes in. */
#ifndef PT_UNWIND_MAPS_H
#define PT_UNWIND_MAPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../bpf/parktrace.h"

struct tracer;

struct unwind_maps {
    int bins_fd, procs_fd;
};

/* The tracer's maps. */
struct unwind_maps unwind_maps_of(struct tracer *t);

/* Makes table BIN of the N rows at ROWS; *BYTES is the kernel memory it
 * takes. 0, or -1 when the kernel refused it. */
int unwind_maps_set_table(const struct unwind_maps *um, uint32_t bin, const uint64_t *rows, size_t n,
                          size_t *bytes);
void unwind_maps_drop_table(const struct unwind_maps *um, uint32_t bin);

/* Sets process TGID's list. 0, or -1. */
int unwind_maps_set_proc(const struct unwind_maps *um, int tgid, const struct pt_uproc *up);

/* Calls SEEN with every process list, CTX its first argument; at most
 * LIMIT steps (a key deleted meanwhile restarts the walk). True when the
 * walk reached the end. */
bool unwind_maps_each_proc(const struct unwind_maps *um, int limit, struct pt_uproc *scratch,
                           void (*seen)(void *ctx, const struct pt_uproc *up), void *ctx);

#endif
