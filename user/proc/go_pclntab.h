/* The function table a Go binary keeps for its own tracebacks
 * (.gopclntab): the names of a stripped Go program's functions, which
 * it never loses (the runtime needs them), where its symbol table is
 * gone. Go 1.18 and later (magic 0xfffffff0 and 0xfffffff1). */
#ifndef PT_GO_PCLNTAB_H
#define PT_GO_PCLNTAB_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

/* Called once per function: NAME (NUL-ended, at most name_max bytes
 * before it), its address and its size in bytes. Returns false to stop. */
typedef bool (*go_func_fn)(const char *name, uint64_t addr, uint64_t size, void *arg);

/* Walks TAB, LEN bytes of another user's file (every offset in it
 * checked), calling FN for each function whose name ends within TAB and
 * is at most NAME_MAX bytes. TEXT_START: the address of the text where
 * the table's own is 0 (a PIE's, left for the loader's relocation).
 * Returns the functions given, or -1 when TAB is not a table read here. */
long go_pclntab_walk(const unsigned char *tab, size_t len, uint64_t text_start, size_t name_max, go_func_fn fn,
                     void *arg);

/* The same over ELF's own table (.gopclntab, or .data.rel.ro.gopclntab in
 * a PIE), read whole up to 256 MiB; its text address, where the table
 * leaves it to a PIE's loader, the text section's (where Go's own linker
 * puts its text). -1 when ELF has no table read here. */
long go_pclntab_walk_elf(Elf *elf, size_t name_max, go_func_fn fn, void *arg);

#endif
