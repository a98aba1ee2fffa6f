#include "go_maps.h"

#include "loader.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdint.h>

bool go_maps_set_layout(struct tracer *t, int pid, const struct pt_go_layout *l)
{
    uint32_t key = (uint32_t)pid;
    if (bpf_map_update_elem(t->go_layouts_fd, &key, l, BPF_NOEXIST) == 0)
        return true;
    /* Set before (a command's, before its exec): the same process, kept up to date. */
    if (errno == EEXIST)
        bpf_map_update_elem(t->go_layouts_fd, &key, l, BPF_ANY);
    return false;
}
