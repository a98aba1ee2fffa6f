/* The kernel's unwind tables (bpf/unwind.bpf.h): one array map of CFI rows
 * per binary, built once and shared by every process that maps it, and per
 * process the list of its executable mappings with their tables. */
#ifndef PT_UNWIND_TABLES_H
#define PT_UNWIND_TABLES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* CACHE_DIR: where tables are kept between runs (unwind_cache.h), or
 * NULL for none. */
void unwind_tables_init(int bins_fd, int procs_fd, const char *cache_dir);

/* Stacks are walked in the kernel (--unwind cfi). */
bool unwind_tables_enabled(void);

/* Publishes TGID's mappings, building the tables of binaries not seen
 * before; a JVM's are marked so its code cache is walked as Java frames
 * once the JVM is known. 0, or -1 when the process is gone. */
int unwind_tables_add_process(int tgid);

/* The same after one of TGID's stacks was cut short (a library loaded
 * since?): its maps are read again, a few times per process at most. */
void unwind_tables_refresh(int tgid);

/* Tables made, binaries without usable CFI, the bytes the kernel holds for
 * the tables, and the CPU it took; of the tables, those read from the
 * on-disk cache and those written to it. */
struct unwind_tables_usage {
    size_t binaries, without_cfi, bytes, rows;
    size_t over_budget;       /* binaries left without: 256 MiB or 4096 tables */
    double build_seconds;
    size_t cached, cache_stored;
};
void unwind_tables_usage(struct unwind_tables_usage *u);

/* One line: every table's binary and size. */
void unwind_tables_print(FILE *f);

void unwind_tables_free_all(void);

#endif
