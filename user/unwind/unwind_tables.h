/* The kernel's unwind tables (bpf/unwind.bpf.h): one array map of CFI rows
 * per binary, built once and shared by every process that maps it, and per
 * process the list of its executable mappings with their tables. */
#ifndef PT_UNWIND_TABLES_H
#define PT_UNWIND_TABLES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct procmaps;
struct unwind_maps;
struct unwind_tables;

/* The tables of --unwind cfi, written to the kernel's maps KERNEL;
 * CACHE_DIR is where tables are kept between runs
 * (unwind_cache.h), or NULL for none. Made and freed by the services
 * (services.h); without --unwind cfi there are none, and every function
 * below takes NULL. */
struct unwind_tables *unwind_tables_new(const struct unwind_maps *kernel, const char *cache_dir, struct procmaps *maps);
void unwind_tables_free(struct unwind_tables *ut);

/* Publishes TGID's mappings, building the tables of binaries not seen
 * before; a JVM's are marked so its code cache is walked as Java frames
 * once the JVM is known. 0, or -1 when the process is gone. */
int unwind_tables_add_process(struct unwind_tables *ut, int tgid);

/* The same after one of TGID's stacks was cut short (a library loaded
 * since?): its maps are read again, a few times per process at most. */
void unwind_tables_refresh(struct unwind_tables *ut, int tgid);

/* Takes the tables children have built since (never waiting for one),
 * and publishes again the processes that were waiting for them. Called
 * on every tick of the main loop, and when a build's descriptor is ready. */
void unwind_tables_poll(struct unwind_tables *ut);

/* The descriptors of the builds under way, -1 for none, into FDS
 * (UNWIND_BUILDS): polled, so that a build's end starts the next at once
 * rather than at the next tick (a process mapping 60 of a user's
 * libraries had its tables after 60 ticks, 3 s). */
#define UNWIND_BUILDS 2
void unwind_tables_build_fds(const struct unwind_tables *ut, int fds[UNWIND_BUILDS]);

/* Tables made, binaries without usable CFI, the bytes the kernel holds for
 * the tables, and the CPU it took; of the tables, those read from the
 * on-disk cache and those written to it. */
/* Binaries known at once, an eighth of them of one user other than root. */
#define UNWIND_TABLES_MAX_KNOWN 65536

struct unwind_tables_usage {
    size_t binaries, without_cfi, bytes, rows;
    size_t over_budget;       /* binaries left without: 256 MiB or 4096 tables */
    size_t owner_refused;     /* binaries left without: their owner's share spent */
    size_t evicted;           /* tables let go for room: no live process mapped them */
    size_t known;             /* binaries known now, with a table or not */
    size_t forgotten;         /* binaries without a table forgotten for room */
    size_t files_skipped;     /* mappings not looked at: their process maps over 1 024 files */
    double build_seconds;     /* parktrace's CPU, and its children's cost (isolated_build_poll) */
    size_t cached, cache_stored;
};
void unwind_tables_usage(const struct unwind_tables *ut, struct unwind_tables_usage *u);

/* A binary without a table is forgotten for room once no publishing has
 * met it for NS (10 s); tests shorten it. */
void unwind_tables_set_forget_after(struct unwind_tables *ut, uint64_t ns);

/* One line: every table's binary and size. */
void unwind_tables_print(const struct unwind_tables *ut, FILE *f);

#endif
