#include "foreign_elf.h"

#include <stddef.h>

Elf *foreign_elf_begin(int fd)
{
    return elf_begin(fd, ELF_C_READ, NULL);
}
