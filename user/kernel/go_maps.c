#include "go_maps.h"

#include "loader.h"

#include <bpf/bpf.h>
#include <stdint.h>

bool go_maps_set_layout(struct tracer *t, int pid, const struct pt_go_layout *l)
{
    uint32_t key = (uint32_t)pid;
    return bpf_map_update_elem(t->go_layouts_fd, &key, l, BPF_ANY) == 0;
}
