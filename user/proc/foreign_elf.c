#include "foreign_elf.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

Elf *foreign_elf_begin(int fd)
{
    return elf_begin(fd, ELF_C_READ, NULL);
}

Elf_Scn *foreign_elf_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx))
        return NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        const char *n;
        if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) && strcmp(n, name) == 0)
            return scn;
    }
    return NULL;
}

bool foreign_elf_root_only(const struct stat *st)
{
    return st->st_uid == 0 && !(st->st_mode & 022);
}

int foreign_elf_sealed_copy(int fd, size_t max)
{
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 || (size_t)st.st_size > max)
        return -1;
    int copy = memfd_create("pt-elf-copy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (copy < 0)
        return -1;
    char buf[65536];
    off_t off = 0;
    while (off < st.st_size) {
        ssize_t n = pread(fd, buf, sizeof(buf), off);
        if (n <= 0 || write(copy, buf, (size_t)n) != n)
            break;
        off += n;
    }
    /* Short (cut while read) or grown: not the file that was checked. */
    struct stat now;
    if (off != st.st_size || fstat(fd, &now) || now.st_size != st.st_size ||
        fcntl(copy, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
        close(copy);
        return -1;
    }
    return copy;
}
