/* What the CFI readers share (unwind_rows.c, cfi_scan.c): growable
 * arrays of rows and addresses, and address ranges. Not for other code,
 * which uses unwind_rows.h. */
#ifndef PT_UNWIND_ROWS_PARTS_H
#define PT_UNWIND_ROWS_PARTS_H
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind_rows.h"

#define REG_RBP 6
#define REG_RSP 7
#define ROW_GAP 5             /* internal kind: no FDE covers the pc (PT_CFA_NONE outside) */
#define MAX_RANGES 8
/* A table indexes every 4 KiB page between its first and last row: one
 * whose pages outnumber its rows by this much is mostly holes (a function
 * linked far away) and is not made. */
#define MAX_EMPTY_PAGES 4096

/* A row before truncation to the kernel's 32-bit pc. */
struct row {
    uint64_t pc;
    uint16_t cfa_words;
    uint8_t kind;
    int8_t rbp_words;
};

struct rowvec {
    struct row *v;
    size_t n, cap;
    bool oom;                 /* an allocation failed: the rows are incomplete */
};

struct addrvec {
    uint64_t *v;
    size_t n, cap;
    bool oom;
};

/* A few address ranges: the PLT sections (where an expression CFA is the
 * standard PLT rule), the executable segments (where code can be). */
struct ranges {
    uint64_t lo[MAX_RANGES], hi[MAX_RANGES];
    int n;
};

/* unwind_rows.c */
void *cfi_grow(void *v, size_t *cap, size_t need, size_t size);
void cfi_addr_push(struct addrvec *a, uint64_t x);
Elf_Data *cfi_section_data(Elf *elf, const char *name, uint64_t *addr);

/* cfi_scan.c */
const uint8_t *cfi_eh_hdr_bytes(Elf *elf, size_t *len, uint64_t *addr);
int cfi_eh_hdr_starts(Elf *elf, struct addrvec *out, struct addrvec *fdes);
void cfi_section_starts(Elf *elf, Elf_Data *d, uint64_t addr, bool eh, struct addrvec *out);
bool cfi_section_ok(Elf *elf, Elf_Data *d, bool eh, uint64_t eh_addr, const struct addrvec *fdes);

#endif
