#include "unwind.h"

#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debug_file.h"
#include "elfsyms.h"
#include "foreign_elf.h"
#include "procmaps.h"
#include "unwind_rows.h"

#define MAX_DWFLS 256
#define DWFL_FILES 1024
/* Copies of user-written modules handed to libdwfl (it maps what it is
 * given): a file's at most, and all of them. Past it, a module goes
 * unreported and walks stop at its frames. */
#define COPY_MAX (64u << 20)
#define COPIES_BUDGET (256u << 20)
#define MAX_COPIES 256

struct unwind_ctx {
    const struct pt_sample *smp;
    uint64_t *pcs, *fps;
    int n, max;
};

struct proc_dwfl {
    int pid;
    Dwfl *dwfl;
    struct unwind_ctx ctx;    /* the sample being unwound right now */
};

struct unwinder {
    struct procmaps *maps;
    struct proc_dwfl dwfls[MAX_DWFLS];   /* in place: libdwfl holds pointers to their ctx */
    int ndwfls, next_evict;
    uint64_t reports;         /* processes reported to libdwfl so far (elf_file.reported) */
    /* Sealed copies of files other users can change, by file (the least
     * recently used first out; dwfls keep their own descriptors). */
    struct module_copy { const struct elf_file *ef; struct file_id id; uint64_t bytes, used; int fd; } copies[MAX_COPIES];
    int ncopies;
    uint64_t copies_bytes, copy_clock;
};

struct unwinder *unwinder_new(struct procmaps *maps)
{
    struct unwinder *u = calloc(1, sizeof(*u));
    if (u)
        u->maps = maps;
    return u;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
    (void)dwfl;
    if (*thread_argp)
        return 0;
    *thread_argp = arg;
    return (pid_t)((struct unwind_ctx *)arg)->smp->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
    (void)dwfl;
    (void)tid;
    *thread_argp = arg;
    return true;
}

/* Only the copied stack is readable: the process may be gone by now. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    const struct pt_sample *s = ((struct unwind_ctx *)arg)->smp;
    (void)dwfl;
    /* Without a sum that can wrap: a frame's CFA of -8 read past the copy. */
    if (addr < s->sp || s->len < sizeof(*result) || addr - s->sp > s->len - sizeof(*result))
        return false;
    memcpy(result, s->data + (addr - s->sp), sizeof(*result));
    return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
    const struct pt_sample *s = ((struct unwind_ctx *)arg)->smp;
    /* DWARF x86-64 numbering: 6 = rbp, 7 = rsp. */
    Dwarf_Word regs[2] = {s->bp, s->sp};
    dwfl_thread_state_register_pc(thread, s->ip);
    return dwfl_thread_state_registers(thread, 6, 2, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

/* Every module is reported with a descriptor parktrace opened safely:
 * libdwfl must open nothing by name itself (its own lookups would block
 * on a FIFO planted at a debuglink's name). libdwfl maps the file it is
 * given (MAP_PRIVATE): a file another user can change is given as a
 * sealed copy (module_fd), since a cut file faults on the next walk
 * through it. (Reporting modules by range with the Elf from find_elf left
 * every stack at its first frame.) */
static int no_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
                  Elf **elfp)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
    return -1;
}

static int find_debug_file(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                           const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                           char **debuginfo_file_name)
{
    (void)userdata, (void)modname, (void)base, (void)debuglink_file, (void)debuglink_crc;
    (void)debuginfo_file_name;
    Dwarf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    int fd = -1;
    struct file_ref f = {.fd = -1, .name = file_name};
    /* A debug file whose CFI libdw cannot run at a bounded cost is none. */
    elf_end(elf ? debug_file_open(elf, &f, unwind_rows_cfi_ok, &fd) : NULL);
    /* libdwfl maps it too: one that another user can change, as a copy. */
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) || !foreign_elf_root_only(&st))) {
        int copy = foreign_elf_sealed_copy(fd, COPY_MAX);
        close(fd);
        fd = copy;
    }
    return fd;
}

static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = no_elf,
    .find_debuginfo = find_debug_file,
};

static void drop_copy(struct unwinder *u, int i)
{
    close(u->copies[i].fd);
    u->copies_bytes -= u->copies[i].bytes;
    u->copies[i] = u->copies[--u->ncopies];
}

/* What libdwfl is given for the file of EF open at FD (FD is taken): FD
 * itself when only root can change the file; else a sealed copy of it
 * (foreign_elf.h), since libdwfl maps its modules and a user who cuts
 * the file short would have parktrace fault on the next walk through it.
 * -1 when there is none. */
static int module_fd(struct unwinder *u, const struct elf_file *ef, int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && foreign_elf_root_only(&st))
        return fd;
    int i = 0;
    while (i < u->ncopies && u->copies[i].ef != ef)
        i++;
    if (i < u->ncopies && !file_id_equal(&u->copies[i].id, &ef->id)) {
        drop_copy(u, i);      /* the file changed since */
        i = u->ncopies;
    }
    if (i == u->ncopies) {
        int copy = foreign_elf_sealed_copy(fd, COPY_MAX);
        if (copy < 0 || fstat(copy, &st)) {
            if (copy >= 0)
                close(copy);
            close(fd);
            return -1;
        }
        while (u->ncopies && (u->ncopies == MAX_COPIES || u->copies_bytes + (uint64_t)st.st_size > COPIES_BUDGET)) {
            int old = 0;
            for (int k = 1; k < u->ncopies; k++)
                old = u->copies[k].used < u->copies[old].used ? k : old;
            drop_copy(u, old);
        }
        i = u->ncopies++;
        u->copies[i] = (struct module_copy){.ef = ef, .id = ef->id, .bytes = (uint64_t)st.st_size, .fd = copy};
        u->copies_bytes += (uint64_t)st.st_size;
    }
    close(fd);
    u->copies[i].used = ++u->copy_clock;
    return dup(u->copies[i].fd);
}

/* Reports the process's executable mappings from the cached maps, so the
 * unwind works even after the process has exited. */
static Dwfl *build_dwfl(struct unwinder *u, int pid, struct unwind_ctx *ctx)
{
    struct pm_proc *p = procmaps_get(u->maps, pid);
    Dwfl *dwfl = dwfl_begin(&dwfl_callbacks);
    if (!dwfl)
        return NULL;
    dwfl_report_begin(dwfl);
    int reported = 0;
    /* Each file once, however many mappings it has: a mark per report, not
     * a look at every earlier mapping (65 536 mappings: 2 billion looks). */
    uint64_t report = ++u->reports;
    /* At most DWFL_FILES files a report: each is read, copied if a user's,
     * and libdwfl's own list of modules is searched whole as each is added
     * (a process of 9 300 files: 1.5 s a report). */
    int files = 0;
    const struct pm_map *last = NULL;
    for (int i = 0; i < p->nmaps; i++) {
        struct pm_map *m = &p->maps[i];
        if (!m->exec)
            continue;
        if ((!last || last->dev != m->dev || last->ino != m->ino) && ++files > DWFL_FILES)
            break;
        last = m;
        if (!procmaps_elf(p, m) || m->elf->reported == report)
            continue;
        m->elf->reported = report;
        int fd = procmaps_open(p, m);
        if (fd < 0 || (fd = module_fd(u, m->elf, fd)) < 0)
            continue;
        if (!m->elf->cfi_checked) {
            Elf *elf = foreign_elf_begin(fd);
            m->elf->cfi_ok = elf && unwind_rows_cfi_ok(elf);
            m->elf->cfi_checked = true;
            elf_end(elf);
        }
        if (!m->elf->cfi_ok) {
            close(fd);
            continue;
        }
        if (dwfl_report_elf(dwfl, m->path, m->path, fd, m->bias, true))
            reported++;
        else
            close(fd);
    }
    dwfl_report_end(dwfl, NULL, NULL);
    if (!reported || !dwfl_attach_state(dwfl, NULL, pid, &thread_callbacks, ctx)) {
        dwfl_end(dwfl);
        return NULL;
    }
    return dwfl;
}

/* A free slot: a released one, a new one, or the oldest (evicted). */
static struct proc_dwfl *free_slot(struct unwinder *u)
{
    for (int i = 0; i < u->ndwfls; i++)
        if (!u->dwfls[i].pid)
            return &u->dwfls[i];
    if (u->ndwfls < MAX_DWFLS)
        return &u->dwfls[u->ndwfls++];
    struct proc_dwfl *d = &u->dwfls[u->next_evict];
    u->next_evict = (u->next_evict + 1) % MAX_DWFLS;
    if (d->dwfl)
        dwfl_end(d->dwfl);
    return d;
}

static struct proc_dwfl *dwfl_for(struct unwinder *u, int pid)
{
    for (int i = 0; i < u->ndwfls; i++)
        if (u->dwfls[i].pid == pid)
            return &u->dwfls[i];
    struct proc_dwfl *d = free_slot(u);
    memset(d, 0, sizeof(*d));
    d->pid = pid;
    d->dwfl = build_dwfl(u, pid, &d->ctx);
    return d;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
    struct unwind_ctx *c = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
        return DWARF_CB_ABORT;
    /* The frame's rbp: an interpreted Java frame keeps its Method* below it. */
    Dwarf_Word fp = 0;
    if (c->fps && dwfl_frame_reg(state, 6, &fp) != 0)
        fp = 0;
    if (c->fps)
        c->fps[c->n] = fp;
    c->pcs[c->n++] = pc;
    return c->n < c->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int unwind_sample(struct unwinder *u, int pid, const struct pt_sample *smp, uint64_t *pcs, uint64_t *fps, int max,
                  bool *truncated)
{
    struct proc_dwfl *d = dwfl_for(u, pid);
    *truncated = true;
    if (!d->dwfl)
        return 0;
    d->ctx = (struct unwind_ctx){.smp = smp, .pcs = pcs, .fps = fps, .n = 0, .max = max};
    /* 0: the walk reached a frame whose return address is undefined (the
     * thread's first); -1: it could go no further; the callback's abort: a
     * zero pc (also an end) or the depth limit. The frames found so far are
     * right in every case. */
    int rc = dwfl_getthread_frames(d->dwfl, (pid_t)smp->tid, frame_cb, &d->ctx);
    *truncated = rc < 0 || d->ctx.n >= max;
    return d->ctx.n;
}

void unwind_release(struct unwinder *u, int pid)
{
    /* The slot stays where it is: libdwfl holds a pointer to its ctx. */
    for (int i = 0; i < u->ndwfls; i++)
        if (u->dwfls[i].pid == pid) {
            if (u->dwfls[i].dwfl)
                dwfl_end(u->dwfls[i].dwfl);
            memset(&u->dwfls[i], 0, sizeof(u->dwfls[i]));
        }
}

void unwinder_free(struct unwinder *u)
{
    if (!u)
        return;
    for (int i = 0; i < u->ndwfls; i++)
        if (u->dwfls[i].dwfl)
            dwfl_end(u->dwfls[i].dwfl);
    while (u->ncopies)
        drop_copy(u, 0);
    free(u);
}
