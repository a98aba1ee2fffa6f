#include "unwind.h"

#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debug_file.h"
#include "elfsyms.h"
#include "foreign_elf.h"
#include "procmaps.h"
#include "unwind_rows.h"

#define MAX_DWFLS 256

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
 * given (MAP_PRIVATE), so in --unwind copy a file another user truncates
 * while it is read can still fault (docs/security.md); reporting modules
 * by range with the Elf from find_elf instead left every stack at its
 * first frame (issue 39, open). */
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
    return fd;
}

static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = no_elf,
    .find_debuginfo = find_debug_file,
};

/* Reports the process's executable mappings from the cached maps, so the
 * unwind works even after the process has exited. */
static Dwfl *build_dwfl(struct procmaps *maps, int pid, struct unwind_ctx *ctx)
{
    struct pm_proc *p = procmaps_get(maps, pid);
    Dwfl *dwfl = dwfl_begin(&dwfl_callbacks);
    if (!dwfl)
        return NULL;
    dwfl_report_begin(dwfl);
    int reported = 0;
    for (int i = 0; i < p->nmaps; i++) {
        struct pm_map *m = &p->maps[i];
        if (!m->exec || !procmaps_elf(p, m))
            continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = p->maps[j].exec && p->maps[j].elf == m->elf;
        if (seen)
            continue;
        int fd = procmaps_open(p, m);
        if (fd < 0)
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
    d->dwfl = build_dwfl(u->maps, pid, &d->ctx);
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
    free(u);
}
