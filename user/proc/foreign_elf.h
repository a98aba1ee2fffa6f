/* ELF files of other users, opened for reading without a mapping. */
#ifndef PT_FOREIGN_ELF_H
#define PT_FOREIGN_ELF_H
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>

/* FD's ELF handle, read with pread and never mapped: another user may
 * truncate the file while it is read, and a mapped page past the new end
 * faults (SIGBUS kills parktrace), where a read just comes back short and
 * libelf reports an error. Any kind of file; NULL on failure. */
Elf *foreign_elf_begin(int fd);

/* ELF's first section named NAME, its header in *SH; NULL when none. */
Elf_Scn *foreign_elf_section(Elf *elf, const char *name, GElf_Shdr *sh);

struct stat;

/* Whether a file of status ST can be changed by root alone (owner root,
 * not group- or other-writable): its build-id can be believed, and a
 * library that maps the files it is given (libdwfl) may map it. */
bool foreign_elf_root_only(const struct stat *st);

/* A copy of the file open at FD (at most MAX bytes) in memory parktrace
 * owns, sealed against every change: a descriptor that a library that
 * maps its files can be given in place of another user's file. -1 when
 * the file is larger, changed size while it was copied, or no memory. */
int foreign_elf_sealed_copy(int fd, size_t max);

#endif
