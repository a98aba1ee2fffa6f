/* ELF files of other users, opened for reading without a mapping. */
#ifndef PT_FOREIGN_ELF_H
#define PT_FOREIGN_ELF_H
#include <libelf.h>

/* FD's ELF handle, read with pread and never mapped: another user may
 * truncate the file while it is read, and a mapped page past the new end
 * faults (SIGBUS kills parktrace), where a read just comes back short and
 * libelf reports an error. Any kind of file; NULL on failure. */
Elf *foreign_elf_begin(int fd);

#endif
