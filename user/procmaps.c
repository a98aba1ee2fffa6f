#include "procmaps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"

#define MAX_PROCS 8192
#define MAX_REREADS 8

static struct pm_proc *procs[MAX_PROCS];
static int nprocs;

void procmaps_file_path(int pid, const char *path, char *out, unsigned long len)
{
    snprintf(out, len, "/proc/%d/root%s", pid, path);
    if (access(out, R_OK) != 0)
        snprintf(out, len, "%s", path);
}

static void free_maps(struct pm_proc *p)
{
    for (int i = 0; i < p->nmaps; i++)
        free(p->maps[i].path);
    free(p->maps);
    p->maps = NULL;
    p->nmaps = 0;
}

static void read_maps(struct pm_proc *p)
{
    char fn[64], line[4096];
    snprintf(fn, sizeof(fn), "/proc/%d/maps", p->pid);
    FILE *f = fopen(fn, "re");
    if (!f) {
        p->exited = true;
        return;
    }
    free_maps(p);
    int cap = 0;
    while (fgets(line, sizeof(line), f)) {
        uint64_t start, end, off;
        char perms[8];
        int pathpos = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms,
                   &off, &pathpos) < 4)
            continue;
        if (p->nmaps == cap) {
            cap = cap ? cap * 2 : 64;
            struct pm_map *m = realloc(p->maps, (size_t)cap * sizeof(*m));
            if (!m)
                break;
            p->maps = m;
        }
        char *path = pathpos ? line + pathpos : NULL;
        if (path) {
            path[strcspn(path, "\n")] = '\0';
            if (*path != '/')
                path = NULL;      /* [heap], [stack], [vdso], anonymous */
        }
        p->maps[p->nmaps++] = (struct pm_map){
            .start = start, .end = end, .offset = off, .exec = perms[2] == 'x',
            .path = path ? strdup(path) : NULL};
    }
    fclose(f);
    snprintf(fn, sizeof(fn), "/proc/%d/comm", p->pid);
    f = fopen(fn, "re");
    if (f) {
        if (fgets(p->comm, sizeof(p->comm), f))
            p->comm[strcspn(p->comm, "\n")] = '\0';
        fclose(f);
    }
}

struct pm_proc *procmaps_get(int pid)
{
    for (int i = 0; i < nprocs; i++)
        if (procs[i]->pid == pid)
            return procs[i];
    struct pm_proc *p = calloc(1, sizeof(*p));
    p->pid = pid;
    read_maps(p);
    if (nprocs < MAX_PROCS)
        procs[nprocs++] = p;
    else {
        /* Evict the oldest to bound memory on long system-wide runs. */
        free_maps(procs[0]);
        free(procs[0]);
        memmove(procs, procs + 1, (MAX_PROCS - 1) * sizeof(*procs));
        procs[MAX_PROCS - 1] = p;
    }
    return p;
}

void procmaps_refresh(struct pm_proc *p)
{
    if (p->exited || p->rereads >= MAX_REREADS)
        return;
    p->rereads++;
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
    if (!m->elf_tried) {
        char path[4200];
        m->elf_tried = true;
        procmaps_file_path(p->pid, m->path, path, sizeof(path));
        m->elf = elfsyms_get(path);
        uint64_t vaddr;
        if (m->elf && elfsyms_offset_to_vaddr(m->elf, m->offset, &vaddr))
            m->bias = m->start - vaddr;
        else
            m->elf = NULL;
    }
    return m->elf;
}

struct elf_file *procmaps_image_at(struct pm_proc *p, uint64_t addr, uint64_t *vaddr)
{
    for (int i = 0; i < p->nmaps; i++) {
        struct pm_map *m = &p->maps[i];
        struct elf_file *ef = procmaps_elf(p, m);
        if (!ef)
            continue;
        for (int j = 0; j < ef->nloads; j++) {
            uint64_t lo = ef->loads[j].vaddr + m->bias;
            if (addr >= lo && addr < lo + ef->loads[j].memsz) {
                *vaddr = addr - m->bias;
                return ef;
            }
        }
    }
    return NULL;
}

void procmaps_free_all(void)
{
    for (int i = 0; i < nprocs; i++) {
        free_maps(procs[i]);
        free(procs[i]);
    }
    nprocs = 0;
}
