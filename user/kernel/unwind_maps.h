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

/* Tables made but not yet in unwind_bins: the kernel waits for an RCU
 * grace period after every update of a map of maps (10-25 ms each here,
 * 300 ms for a JVM's 25 binaries, the loop held up meanwhile and
 * short-lived processes gone before it saw them), once for a batch. */
#define UNWIND_MAPS_PENDING 64

struct unwind_maps {
    int bins_fd, procs_fd;
    /* Bumped at each change of the tables (the programs' row cache holds
     * only under one count); NULL: no programs to tell. */
    volatile uint32_t *tables_gen;
    int npending;
    uint32_t pending_bin[UNWIND_MAPS_PENDING];
    int pending_fd[UNWIND_MAPS_PENDING];
};

/* The tracer's maps. */
struct unwind_maps unwind_maps_of(struct tracer *t);

/* Makes table BIN of the N rows at ROWS; *BYTES is the kernel memory it
 * takes. 0, or -1 when the kernel refused it. It is in the kernel's walk
 * from the next unwind_maps_flush (or unwind_maps_set_proc) on. */
int unwind_maps_set_table(struct unwind_maps *um, uint32_t bin, const uint64_t *rows, size_t n, size_t *bytes);
void unwind_maps_drop_table(struct unwind_maps *um, uint32_t bin);

/* Puts the tables made since the last flush in place, in one update. */
void unwind_maps_flush(struct unwind_maps *um);

/* Sets process TGID's list, its tables flushed first. 0, or -1. */
int unwind_maps_set_proc(struct unwind_maps *um, int tgid, const struct pt_uproc *up);

/* Calls SEEN with every process list of a live process, CTX its first
 * argument; at most LIMIT steps (a key deleted meanwhile restarts the
 * walk). True when the walk reached the end. The lists of processes gone,
 * up to UNWIND_MAPS_GONE a walk, are deleted: the kernel drops a list at
 * its process's exit, but a list written after it (a publishing that
 * raced the exit: the process's maps read while it lived) would keep its
 * tables from being let go for the rest of the run. */
#define UNWIND_MAPS_GONE 256
bool unwind_maps_each_proc(const struct unwind_maps *um, int limit, struct pt_uproc *scratch,
                           void (*seen)(void *ctx, const struct pt_uproc *up), void *ctx);

#endif
