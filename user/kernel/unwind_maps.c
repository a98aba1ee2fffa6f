#include "unwind_maps.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "loader.h"

struct unwind_maps unwind_maps_of(struct tracer *t)
{
    return (struct unwind_maps){t->unwind_bins_fd, t->unwind_procs_fd};
}

int unwind_maps_set_table(const struct unwind_maps *um, uint32_t bin, const uint64_t *rows, size_t n,
                          size_t *bytes)
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
    int err = bpf_map_update_elem(um->bins_fd, &bin, &fd, BPF_ANY);
    close(fd);     /* the outer map holds it now */
    if (err)
        return -1;
    *bytes = len;
    return 0;
}

void unwind_maps_drop_table(const struct unwind_maps *um, uint32_t bin)
{
    bpf_map_delete_elem(um->bins_fd, &bin);
}

int unwind_maps_set_proc(const struct unwind_maps *um, int tgid, const struct pt_uproc *up)
{
    uint32_t key = (uint32_t)tgid;
    return bpf_map_update_elem(um->procs_fd, &key, up, BPF_ANY) ? -1 : 0;
}

bool unwind_maps_each_proc(const struct unwind_maps *um, int limit, struct pt_uproc *scratch,
                           void (*seen)(void *ctx, const struct pt_uproc *up), void *ctx)
{
    uint32_t key, next;
    int err = bpf_map_get_next_key(um->procs_fd, NULL, &next);
    for (; !err && limit > 0; limit--, err = bpf_map_get_next_key(um->procs_fd, &key, &next)) {
        key = next;
        if (bpf_map_lookup_elem(um->procs_fd, &key, scratch) == 0)
            seen(ctx, scratch);
    }
    return err == -ENOENT || (err && errno == ENOENT);
}
