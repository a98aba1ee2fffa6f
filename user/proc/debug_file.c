#include "debug_file.h"

#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_id.h"
#include "foreign_elf.h"

static char debug_root[PATH_MAX] = "/usr/lib/debug";

void debug_file_set_root(const char *dir)
{
    snprintf(debug_root, sizeof(debug_root), "%s", dir);
}

static bool same_inode(int a, int b)
{
    struct stat sa, sb;
    return a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Candidate FD (closed unless accepted) as the debug file of F. */
static Elf *accept_candidate(int fd, const struct file_ref *f, const uint8_t *id, size_t idlen,
                             debug_file_wanted wanted, int *out)
{
    if (fd < 0)
        return NULL;
    if (same_inode(fd, f->fd)) {
        close(fd);
        return NULL;
    }
    Elf *d = foreign_elf_begin(fd);
    GElf_Ehdr eh;
    uint8_t did[BUILD_ID_MAX];
    size_t dlen;
    if (d && elf_kind(d) == ELF_K_ELF && gelf_getehdr(d, &eh) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
        eh.e_machine == EM_X86_64 &&
        (!idlen || !(dlen = build_id_read(d, did)) || (dlen == idlen && memcmp(id, did, idlen) == 0)) &&
        wanted(d)) {
        *out = fd;
        return d;
    }
    elf_end(d);
    close(fd);
    return NULL;
}

/* The name in ELF's .gnu_debuglink if it is a plain file name, else NULL. */
static const char *debuglink_name(Elf *elf)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx))
        return NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *n;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
            !(n = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(n, ".gnu_debuglink") != 0)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        const char *link = d && d->d_buf ? d->d_buf : NULL;
        size_t len = link ? strnlen(link, d->d_size) : 0;
        if (!len || len == d->d_size || len > NAME_MAX || memchr(link, '/', len) || strcmp(link, ".") == 0 ||
            strcmp(link, "..") == 0)
            return NULL;
        return link;
    }
    return NULL;
}

/* Whether process PID has a root of its own (a container's, a chroot):
 * its debug packages are then its root's, not the host's. */
static bool own_root(int pid)
{
    struct stat mine, theirs;
    int dir = pid > 0 ? safe_dir_in_root(pid, "/") : -1;
    bool own = dir >= 0 && fstat(dir, &theirs) == 0 && stat("/", &mine) == 0 &&
               (mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino);
    if (dir >= 0)
        close(dir);
    return own;
}

Elf *debug_file_open(Elf *elf, const struct file_ref *f, debug_file_wanted wanted, int *fd)
{
    char cand[PATH_MAX];
    uint8_t id[BUILD_ID_MAX];
    size_t idlen = build_id_read(elf, id);
    Elf *d;
    *fd = -1;
    bool inside = own_root(f->pid);
    if (idlen) {
        char hex[2 * BUILD_ID_MAX + 1];
        build_id_hex(id, idlen, hex);
        if ((size_t)snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s.debug", debug_root, hex, hex + 2) <
                sizeof(cand) &&
            (d = accept_candidate(safe_open(cand), f, id, idlen, wanted, fd)))
            return d;
        /* The container's own debug package: the build id proves it is
         * this binary's, whatever the container put there. */
        if (inside &&
            (size_t)snprintf(cand, sizeof(cand), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2) <
                sizeof(cand) &&
            (d = accept_candidate(safe_open_in_root(f->pid, cand), f, id, idlen, wanted, fd)))
            return d;
    }
    const char *link = debuglink_name(elf);
    const char *slash = f->name ? strrchr(f->name, '/') : NULL;
    if (!link || !slash)
        return NULL;
    int dirlen = (int)(slash - f->name);
    /* Next to the file and in its .debug/, as the process sees them. */
    const char *near[] = {"%.*s/%s", "%.*s/.debug/%s"};
    for (int i = 0; i < 2; i++)
        if ((size_t)snprintf(cand, sizeof(cand), near[i], dirlen, f->name, link) < sizeof(cand) &&
            (d = accept_candidate(safe_open_in_root(f->pid, cand), f, id, idlen, wanted, fd)))
            return d;
    if (inside && (size_t)snprintf(cand, sizeof(cand), "/usr/lib/debug%.*s/%s", dirlen, f->name, link) <
                      sizeof(cand) &&
        (d = accept_candidate(safe_open_in_root(f->pid, cand), f, id, idlen, wanted, fd)))
        return d;
    if ((size_t)snprintf(cand, sizeof(cand), "%s%.*s/%s", debug_root, dirlen, f->name, link) < sizeof(cand))
        return accept_candidate(safe_open(cand), f, id, idlen, wanted, fd);
    return NULL;
}
