/* A minimal ELF file for tests that need many distinct real files: an ELF
 * header and one PT_LOAD, as little as libelf takes, no symbols, no CFI. */
#ifndef PT_TEST_TINY_ELF_H
#define PT_TEST_TINY_ELF_H
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes it at PATH with MODE and owner UID (-1: the caller). */
static inline bool tiny_elf_write(const char *path, mode_t mode, uid_t uid)
{
    struct {
        Elf64_Ehdr eh;
        Elf64_Phdr ph;
    } f = {0};
    memcpy(f.eh.e_ident, ELFMAG, SELFMAG);
    f.eh.e_ident[EI_CLASS] = ELFCLASS64;
    f.eh.e_ident[EI_DATA] = ELFDATA2LSB;
    f.eh.e_ident[EI_VERSION] = EV_CURRENT;
    f.eh.e_type = ET_DYN;
    f.eh.e_machine = EM_X86_64;
    f.eh.e_version = EV_CURRENT;
    f.eh.e_phoff = sizeof(f.eh);
    f.eh.e_ehsize = sizeof(f.eh);
    f.eh.e_phentsize = sizeof(f.ph);
    f.eh.e_phnum = 1;
    f.ph = (Elf64_Phdr){.p_type = PT_LOAD, .p_filesz = sizeof(f), .p_memsz = sizeof(f), .p_align = 4096};
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write(fd, &f, sizeof(f)) == (ssize_t)sizeof(f) && fchmod(fd, mode) == 0 &&
              (uid == (uid_t)-1 || fchown(fd, uid, uid) == 0);
    if (fd >= 0)
        close(fd);
    return ok;
}

#endif
