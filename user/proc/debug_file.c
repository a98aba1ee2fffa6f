#include "debug_file.h"

#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
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

/* What debug_file_open looks for: F's debug file (build id ID, IDLEN
 * bytes, 0: none), one WANTED takes; its descriptor goes to *FD. */
struct sought {
    const struct file_ref *f;
    const uint8_t *id;
    size_t idlen;
    debug_file_wanted wanted;
    int *fd;
};

/* The candidate at the path FMT makes, as F's process sees it (IN_ROOT)
 * or as parktrace does; NULL when it is none, or the path too long. */
__attribute__((format(printf, 3, 4))) static Elf *try_path(const struct sought *w, bool in_root, const char *fmt, ...)
{
    char cand[PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cand, sizeof(cand), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(cand))
        return NULL;
    int fd = in_root ? safe_open_in_root(w->f->pid, cand) : safe_open(cand);
    return accept_candidate(fd, w->f, w->id, w->idlen, w->wanted, w->fd);
}

Elf *debug_file_open(Elf *elf, const struct file_ref *f, debug_file_wanted wanted, int *fd)
{
    uint8_t id[BUILD_ID_MAX];
    char hex[2 * BUILD_ID_MAX + 1];
    struct sought w = {.f = f, .id = id, .idlen = build_id_read(elf, id), .wanted = wanted, .fd = fd};
    Elf *d;
    *fd = -1;
    if (w.idlen) {
        build_id_hex(id, w.idlen, hex);
        if ((d = try_path(&w, false, "%s/.build-id/%.2s/%s.debug", debug_root, hex, hex + 2)))
            return d;
    }
    /* A container's own debug package: by build id after the host's (the
     * id proves it is this binary's, whatever the container put there),
     * by debug link before it (the host's file at that path may be another
     * binary's). */
    bool inside = own_root(f->pid);
    if (w.idlen && inside && (d = try_path(&w, true, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2)))
        return d;
    const char *link = debuglink_name(elf);
    const char *slash = f->name ? strrchr(f->name, '/') : NULL;
    if (!link || !slash)
        return NULL;
    int dirlen = (int)(slash - f->name);
    /* Next to the file and in its .debug/, as the process sees them. */
    if ((d = try_path(&w, true, "%.*s/%s", dirlen, f->name, link)) ||
        (d = try_path(&w, true, "%.*s/.debug/%s", dirlen, f->name, link)) ||
        (inside && (d = try_path(&w, true, "/usr/lib/debug%.*s/%s", dirlen, f->name, link))))
        return d;
    return try_path(&w, false, "%s%.*s/%s", debug_root, dirlen, f->name, link);
}
