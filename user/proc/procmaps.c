#include "procmaps.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elfsyms.h"
#include "procstatus.h"
#include "cgroup_names.h"
#include "safe_open.h"
#include "oom.h"

#define MAX_PROCS 8192
#define MAX_REREADS 8
/* Path bytes kept, per process and for all of them: past either, a
 * mapping's path is PATH_NOT_KEPT (the file is still reached through
 * /proc/PID/map_files while the process lives). A user's three processes
 * of 60 000 mappings with 3.9 KB paths took 430 MB (issue 39). */
#define PROC_PATH_BYTES (1u << 20)
#define ALL_PATH_BYTES (64u << 20)
static const char PATH_NOT_KEPT[] = "/(path not kept)";

struct procmaps {
    struct elfsyms *syms;
    char list_buf[1 << 16];   /* the list being read (procmaps_open_list) */
    struct cgroup_names *cgroups;
    struct pm_proc *procs[MAX_PROCS];
    int nprocs;
    size_t path_bytes;        /* held by all processes' maps */
};

struct procmaps *procmaps_new(struct elfsyms *syms)
{
    struct procmaps *pm = calloc(1, sizeof(*pm));
    if (pm && !(pm->cgroups = cgroup_names_new())) {
        free(pm);
        return NULL;
    }
    if (pm)
        pm->syms = syms;
    return pm;
}

static void free_maps(struct pm_proc *p)
{
    for (int i = 0; i < p->nmaps; i++) {
        elfsyms_release(p->maps[i].elf);
        if (p->maps[i].owns_path) {
            if (p->owner)
                p->owner->path_bytes -= strlen(p->maps[i].path) + 1;
            free(p->maps[i].path);
        }
    }
    free(p->maps);
    p->maps = NULL;
    p->nmaps = 0;
    elfsyms_release(p->last_elf);
    p->last_elf = NULL;       /* read afresh with the new list */
}

/* A number in BASE (16 or 10) at S, at most 16 hex or 19 decimal digits:
 * the first character after it, or NULL when there is none. By hand: with
 * sscanf the parsing of 3 x 60 000 mappings was a fifth of parktrace's CPU. */
static const char *number(const char *s, int base, uint64_t *v)
{
    const char *b = s;
    uint64_t x = 0;
    for (;; s++) {
        unsigned d = *s >= '0' && *s <= '9'                  ? (unsigned)(*s - '0')
                     : base == 16 && *s >= 'a' && *s <= 'f' ? (unsigned)(*s - 'a' + 10)
                                                            : 99;
        if (d == 99)
            break;
        if (s - b == (base == 16 ? 16 : 19))
            return NULL;
        x = x * (uint64_t)base + d;
    }
    *v = x;
    return s == b ? NULL : s;
}

/* S past the character C, or NULL when it is not there. */
static const char *after(const char *s, char c)
{
    return s && *s == c ? s + 1 : NULL;
}

/* One line of /proc/PID/maps into M ("start-end perms offset major:minor
 * inode  path"); false for a line without an address range. The path is
 * kept only when absolute (not [heap], [vdso], ...). */
static bool parse_line(char *line, struct pm_map *m)
{
    uint64_t start, end, off, major, minor, ino;
    const char *s = number(line, 16, &start);
    s = after(s, '-');
    s = s ? number(s, 16, &end) : NULL;
    s = after(s, ' ');
    if (!s)
        return false;
    const char *perms = s;
    size_t nperms = strcspn(s, " \n");
    if (nperms < 3 || nperms > 7)
        return false;
    s = after(s + nperms, ' ');
    s = s ? number(s, 16, &off) : NULL;
    s = after(s, ' ');
    s = s ? number(s, 16, &major) : NULL;
    s = after(s, ':');
    s = s ? number(s, 16, &minor) : NULL;
    s = after(s, ' ');
    s = s ? number(s, 10, &ino) : NULL;
    if (!s || start >= end || major > 0xfff || minor > 0xfffff)
        return false;
    char *path = line + (s - line);
    path += strspn(path, " \t");
    path[strcspn(path, "\n")] = '\0';
    *m = (struct pm_map){.start = start, .end = end, .offset = off, .exec = perms[2] == 'x',
                         .dev = makedev((unsigned)major, (unsigned)minor), .ino = ino,
                         .path = *path == '/' ? path : NULL};
    return true;
}

/* Paths of the maps being read, one copy per file (dev, inode): a file
 * mapped 60 000 times keeps one. */
struct path_table {
    struct {
        dev_t dev;
        uint64_t ino;
        char *path;
    } e[1024];
    size_t bytes;             /* copies made for this process */
};

/* M's path (pointing into the line just read) as kept: shared with an
 * earlier mapping of the same file, a new copy, or PATH_NOT_KEPT past the
 * budgets. */
static void keep_path(struct pm_proc *p, struct path_table *t, struct pm_map *m)
{
    if (!m->path)
        return;
    size_t h = (size_t)(inode_hash(m->dev, m->ino) % (sizeof(t->e) / sizeof(t->e[0])));
    if (t->e[h].path && t->e[h].dev == m->dev && t->e[h].ino == m->ino && !strcmp(t->e[h].path, m->path)) {
        m->path = t->e[h].path;
        return;
    }
    size_t n = strlen(m->path) + 1;
    size_t all = p->owner ? p->owner->path_bytes : 0;
    char *copy = t->bytes + n <= PROC_PATH_BYTES && all + n <= ALL_PATH_BYTES ? malloc(n) : NULL;
    if (!copy) {
        m->path = (char *)PATH_NOT_KEPT;
        return;
    }
    memcpy(copy, m->path, n);
    m->path = copy;
    m->owns_path = true;
    t->bytes += n;
    if (p->owner)
        p->owner->path_bytes += n;
    t->e[h].dev = m->dev;
    t->e[h].ino = m->ino;
    t->e[h].path = copy;
}

int procmaps_parse(FILE *f, struct pm_proc *p)
{
    char line[PATH_MAX + 256];
    int cap = 0;
    struct path_table table = {0};   /* 24 KiB */
    free_maps(p);
    size_t text = 0;
    while (fgets(line, sizeof(line), f)) {
        /* The kernel writes every path of every mapping: 60 000 mappings
         * at a 3.9 KB path are 234 MB of text a read. */
        if ((text += strlen(line)) > PROCMAPS_MAX_TEXT)
            return -1;
        /* A line longer than the buffer (a long path) is dropped whole: its
         * tail must not be read as a line of its own. */
        if (!strchr(line, '\n') && !feof(f)) {
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n')
                ;
            continue;
        }
        if (p->nmaps >= PROCMAPS_MAX_MAPS)
            return -1;
        if (p->nmaps == cap) {
            cap = cap ? cap * 2 : 64;
            struct pm_map *m = realloc(p->maps, (size_t)cap * sizeof(*m));
            if (!m)
                return -1;
            p->maps = m;
        }
        if (parse_line(line, &p->maps[p->nmaps]))
            keep_path(p, &table, &p->maps[p->nmaps++]);
    }
    return 0;
}

FILE *procmaps_open_list(int pid, char *buf, size_t len)
{
    char fn[64];
    snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
    FILE *f = fopen(fn, "re");
    if (f)
        setvbuf(f, buf, _IOFBF, len);
    return f;
}

static void read_maps(struct pm_proc *p)
{
    char fn[64];
    /* Who it is, even when its maps cannot be read: a list that does not
     * open for a live process (during its exec, say) left its namespace
     * pid 0 for good, and a container's rows without it. */
    struct procstatus ps;
    bool status = procstatus_read(p->pid, &ps) == 0;
    FILE *f = procmaps_open_list(p->pid, p->owner->list_buf, sizeof(p->owner->list_buf));
    if (!f && !status) {
        p->exited = true;
        return;
    }
    if (f) {
        /* A list cut at its caps is not read again on a miss: the rest
         * would be cut the same way, at the same cost. */
        if (procmaps_parse(f, p))
            p->rereads = MAX_REREADS;
        fclose(f);
    }
    p->uid = status ? (uint32_t)ps.euid : UINT32_MAX;
    if (status)     /* a failed reading keeps what an earlier one found */
        p->ns_pid = ps.nslevels > 1 ? ps.nspid : 0;
    const struct cgroup_name *cg = cgroup_names_of_pid(p->owner->cgroups, p->pid);
    if (cg)
        p->cgroup = cg;
    snprintf(fn, sizeof(fn), "/proc/%d/comm", p->pid);
    f = fopen(fn, "re");
    if (f) {
        if (fgets(p->comm, sizeof(p->comm), f))
            p->comm[strcspn(p->comm, "\n")] = '\0';
        fclose(f);
    }
}

/* Whether FD is the very file the mapping was made from. */
static bool is_mapped_file(int fd, const struct pm_map *m)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_ino == m->ino && st.st_dev == m->dev;
}

int procmaps_open(const struct pm_proc *p, const struct pm_map *m)
{
    char path[80];
    /* The mapping's own inode, even when deleted or in another mount
     * namespace; a path can be replaced, this cannot. */
    snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, p->pid, m->start, m->end);
    int fd = safe_open_at(AT_FDCWD, path, 0);
    if (fd >= 0)
        return fd;
    /* No CAP_SYS_ADMIN, or the process has exited: its path, in its root
     * and then in ours, if the file found there is the same inode. */
    if (!m->path || strstr(m->path, " (deleted)"))
        return -1;
    for (int i = 0; i < 2; i++) {
        fd = i == 0 ? safe_open_in_root(p->pid, m->path) : safe_open(m->path);
        if (fd >= 0 && is_mapped_file(fd, m))
            return fd;
        if (fd >= 0)
            close(fd);
    }
    return -1;
}

struct cgroup_names *procmaps_cgroups(struct procmaps *pm)
{
    return pm->cgroups;
}

struct pm_proc *procmaps_get(struct procmaps *pm, int pid)
{
    for (int i = 0; i < pm->nprocs; i++)
        if (pm->procs[i]->pid == pid)
            return pm->procs[i];
    struct pm_proc *p = calloc(1, sizeof(*p));
    if (!p) {
        out_of_memory("process maps");
    }
    p->owner = pm;
    p->pid = pid;
    read_maps(p);
    if (pm->nprocs < MAX_PROCS)
        pm->procs[pm->nprocs++] = p;
    else {
        /* Evict the oldest to bound memory on long system-wide runs. */
        free_maps(pm->procs[0]);
        free(pm->procs[0]);
        memmove(pm->procs, pm->procs + 1, (MAX_PROCS - 1) * sizeof(*pm->procs));
        pm->procs[MAX_PROCS - 1] = p;
    }
    return p;
}

/* Without it, every process a machine starts kept its maps until MAX_PROCS
 * of them were held (a soak's pgbench backends and JVMs: 30 MiB in an hour,
 * 20 to 150 KiB each). */
void procmaps_forget_exited(struct procmaps *pm, uint64_t now_ns)
{
    if (!pm)
        return;
    int kept = 0;
    for (int i = 0; i < pm->nprocs; i++) {
        struct pm_proc *p = pm->procs[i];
        if (!procstatus_gone(p->pid))
            p->gone_ns = 0;     /* alive (or a new process under its pid) */
        else if (!p->gone_ns)
            p->gone_ns = now_ns;
        if (p->gone_ns && now_ns - p->gone_ns >= PROCMAPS_GONE_NS) {
            free_maps(p);
            free(p);
            continue;
        }
        pm->procs[kept++] = p;
    }
    pm->nprocs = kept;
}

void procmaps_usage(const struct procmaps *pm, size_t *procs, size_t *bytes)
{
    *procs = pm ? (size_t)pm->nprocs : 0;
    *bytes = 0;
    for (int i = 0; pm && i < pm->nprocs; i++) {
        const struct pm_proc *p = pm->procs[i];
        *bytes += sizeof(*p) + (size_t)p->nmaps * sizeof(*p->maps);
    }
    if (pm)
        *bytes += pm->path_bytes;
}

void procmaps_refresh(struct pm_proc *p)
{
    if (p->exited || p->rereads >= MAX_REREADS)
        return;
    p->rereads++;
    read_maps(p);
}

void procmaps_reread(struct pm_proc *p)
{
    p->exited = false;
    read_maps(p);
}

struct pm_map *procmaps_find(struct pm_proc *p, uint64_t addr)
{
    for (int i = 0; i < p->nmaps; i++)
        if (addr >= p->maps[i].start && addr < p->maps[i].end)
            return &p->maps[i];
    return NULL;
}

struct elf_file *procmaps_elf(struct pm_proc *p, struct pm_map *m)
{
    if (!m->path)
        return NULL;
    /* A file whose symbols were evicted is read again while it can be. */
    if (!m->elf_tried || (m->elf && elfsyms_evicted(m->elf))) {
        m->elf_tried = true;
        elfsyms_release(m->elf);
        m->elf = NULL;
        struct elf_file *ef = p->last_elf;
        if (!ef || p->last_dev != m->dev || p->last_ino != m->ino || elfsyms_evicted(ef)) {
            int fd = procmaps_open(p, m);
            if (fd < 0)
                return NULL;
            ef = elfsyms_get(p->owner->syms, &(struct file_ref){.fd = fd, .name = m->path, .pid = p->pid});
            close(fd);
            /* Held, as the maps' files are: the symbol tables forget the
             * files no one holds when they are full. */
            elfsyms_hold(ef);
            elfsyms_release(p->last_elf);
            p->last_dev = m->dev;
            p->last_ino = m->ino;
            p->last_elf = ef;
        }
        uint64_t vaddr;
        if (ef && elfsyms_offset_to_vaddr(ef, m->offset, &vaddr)) {
            m->bias = m->start - vaddr;
            m->elf = ef;
            elfsyms_hold(ef);
        }
    }
    return m->elf;
}

/* How far back over one file's mappings an image is looked for (a
 * linker writes 2 to 5 segments). */
#define IMAGE_MAPPINGS 16

struct elf_file *procmaps_image_at(struct pm_proc *p, uint64_t addr, uint64_t *vaddr)
{
    /* Only the file mapped nearest below ADDR can cover it (its .bss runs
     * on in an anonymous mapping right after it): one file read, not each
     * of the process's files (a process of 9 300: 1.8 s). The list is in
     * address order, as the kernel writes it. */
    int at = -1;
    for (int i = 0; i < p->nmaps && p->maps[i].start <= addr; i++)
        if (p->maps[i].path)
            at = i;
    for (int i = at, n = 0; i >= 0 && n < IMAGE_MAPPINGS; i--, n++) {
        struct pm_map *m = &p->maps[i];
        if (!m->path || m->dev != p->maps[at].dev || m->ino != p->maps[at].ino)
            break;
        struct elf_file *ef = procmaps_elf(p, m);
        for (int j = 0; ef && j < ef->nloads; j++) {
            uint64_t lo = ef->loads[j].vaddr + m->bias;
            if (addr >= lo && addr < lo + ef->loads[j].memsz) {
                *vaddr = addr - m->bias;
                return ef;
            }
        }
    }
    return NULL;
}

void procmaps_free(struct procmaps *pm)
{
    if (!pm)
        return;
    for (int i = 0; i < pm->nprocs; i++) {
        free_maps(pm->procs[i]);
        free(pm->procs[i]);
    }
    cgroup_names_free(pm->cgroups);
    free(pm);
}
