#include "unwind_maps.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "loader.h"
#include "procstatus.h"

struct unwind_maps unwind_maps_of(struct tracer *t)
{
    return (struct unwind_maps){
        .bins_fd = t->unwind_bins_fd, .procs_fd = t->unwind_procs_fd, .tables_gen = tracer_unwind_gen(t)};
}

/* After the tables changed: rows the programs cached before are stale. */
static void tables_changed(struct unwind_maps *um)
{
    if (um->tables_gen)
        __atomic_add_fetch(um->tables_gen, 1, __ATOMIC_RELEASE);
}

/* Takes BIN out of the pending tables, if it is there. */
static void unpend(struct unwind_maps *um, uint32_t bin)
{
    for (int i = 0; i < um->npending; i++)
        if (um->pending_bin[i] == bin) {
            close(um->pending_fd[i]);
            um->npending--;
            um->pending_bin[i] = um->pending_bin[um->npending];
            um->pending_fd[i] = um->pending_fd[um->npending];
            return;
        }
}

void unwind_maps_flush(struct unwind_maps *um)
{
    if (!um->npending)
        return;
    uint32_t count = (uint32_t)um->npending;
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    /* A kernel without batches for maps of maps: one at a time. */
    if (bpf_map_update_batch(um->bins_fd, um->pending_bin, um->pending_fd, &count, &opts))
        for (int i = (int)count; i < um->npending; i++)
            bpf_map_update_elem(um->bins_fd, &um->pending_bin[i], &um->pending_fd[i], BPF_ANY);
    for (int i = 0; i < um->npending; i++)
        close(um->pending_fd[i]);    /* the outer map holds them now */
    um->npending = 0;
    tables_changed(um);
}

int unwind_maps_set_table(struct unwind_maps *um, uint32_t bin, const uint64_t *rows, size_t n, size_t *bytes)
{
    LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
    int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pt_unwind_rows", sizeof(uint32_t), sizeof(uint64_t),
                            (uint32_t)n, &opts);
    if (fd < 0)
        return -1;
    /* Written through a mapping: one copy, not a system call per row. */
    size_t len = (n * sizeof(uint64_t) + 4095) & ~(size_t)4095;
    void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) {
        close(fd);
        return -1;
    }
    memcpy(mem, rows, n * sizeof(uint64_t));
    munmap(mem, len);
    unpend(um, bin);
    if (um->npending == UNWIND_MAPS_PENDING)
        unwind_maps_flush(um);
    um->pending_bin[um->npending] = bin;
    um->pending_fd[um->npending++] = fd;
    *bytes = len;
    return 0;
}

void unwind_maps_drop_table(struct unwind_maps *um, uint32_t bin)
{
    unpend(um, bin);
    bpf_map_delete_elem(um->bins_fd, &bin);
    tables_changed(um);
}

int unwind_maps_set_proc(struct unwind_maps *um, int tgid, const struct pt_uproc *up)
{
    unwind_maps_flush(um);
    uint32_t key = (uint32_t)tgid;
    return bpf_map_update_elem(um->procs_fd, &key, up, BPF_ANY) ? -1 : 0;
}

bool unwind_maps_each_proc(const struct unwind_maps *um, int limit, struct pt_uproc *scratch,
                           void (*seen)(void *ctx, const struct pt_uproc *up), void *ctx)
{
    uint32_t key, next, gone[UNWIND_MAPS_GONE];
    int ngone = 0;
    int err = bpf_map_get_next_key(um->procs_fd, NULL, &next);
    for (; !err && limit > 0; limit--, err = bpf_map_get_next_key(um->procs_fd, &key, &next)) {
        key = next;
        /* Gone, not merely exited: a zombie's list stays until it is
         * reaped, and a pid used again keeps the list (its first wait
         * asks anew). */
        if (ngone < UNWIND_MAPS_GONE && procstatus_gone((int)key))
            gone[ngone++] = key;
        else if (bpf_map_lookup_elem(um->procs_fd, &key, scratch) == 0)
            seen(ctx, scratch);
    }
    for (int i = 0; i < ngone; i++)
        bpf_map_delete_elem(um->procs_fd, &gone[i]);
    return err == -ENOENT || (err && errno == ENOENT);
}
