/* A binary's DWARF call-frame information (elfutils libdw) turned into the
 * compact rows the kernel's stack walker follows (bpf/parktrace.h,
 * struct pt_urow), and into the table layout of one binary's map. */
#ifndef PT_UNWIND_ROWS_H
#define PT_UNWIND_ROWS_H
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../bpf/parktrace.h"

struct unwind_rows {
    struct pt_urow *rows;     /* sorted by pc, no two with the same pc */
    size_t n;
    char build_id[41];        /* hex, "" when the file has none */
};

/* Builds the rows of the ELF file at PATH from its .eh_frame (through
 * .eh_frame_hdr's table of FDEs) and its .debug_frame, in this file or in
 * its separate debug file (by build-id or debuglink under /usr/lib/debug).
 * Gaps between FDEs get PT_CFA_NONE rows. Returns 0, or -1 with nothing
 * allocated when the file has no usable CFI. */
int unwind_rows_build(const char *path, struct unwind_rows *out);

struct file_ref;
/* The same for a file a process maps (its debuglink found as it sees it). */
int unwind_rows_build_ref(const struct file_ref *f, struct unwind_rows *out);

/* Whether ELF's CFI sections hold only instructions libdw can run at a
 * bounded cost (the --unwind copy unwinder asks before using a file). */
bool unwind_rows_cfi_ok(Elf *elf);

void unwind_rows_free(struct unwind_rows *r);

/* The table layout of bpf/parktrace.h (head, page index, rows) for R, in
 * *N 8-byte entries, newly allocated; NULL when R has no rows. */
uint64_t *unwind_rows_table(const struct unwind_rows *r, size_t *n);

/* The row in force at file virtual address PC (what the kernel's lookup
 * finds), or NULL when PC lies before the first row. */
const struct pt_urow *unwind_rows_find(const struct unwind_rows *r, uint32_t pc);

#endif
