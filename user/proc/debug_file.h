/* The separate debug file of an ELF file (its full symbol table, its
 * .debug_frame), found the way gdb and libdw look: by build-id under the
 * debug root, then by .gnu_debuglink next to the file, in its .debug/ and
 * under the debug root. A debuglink is a plain file name: one with a '/'
 * (../../dev/ptmx) is refused, and every candidate is opened with
 * safe_open, so a hostile binary cannot make parktrace block or open a
 * device. */
#ifndef PT_DEBUG_FILE_H
#define PT_DEBUG_FILE_H
#include <libelf.h>
#include <stdbool.h>

#include "safe_open.h"

/* Whether a candidate has what the caller needs (a symtab, a .debug_frame). */
typedef bool (*debug_file_wanted)(Elf *dbg);

/* The debug file of ELF (opened from F): an x86-64 ELF file other than F
 * itself, with F's build-id when both have one, that WANTED accepts; *FD
 * is its descriptor, to close with elf_end(). NULL when there is none. */
Elf *debug_file_open(Elf *elf, const struct file_ref *f, debug_file_wanted wanted, int *fd);

/* Where debug files live (/usr/lib/debug); tests point it at their own. */
void debug_file_set_root(const char *dir);

#endif
