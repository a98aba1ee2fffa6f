#include "slot_table.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "parktrace.skel.h"

bool slot_table_unpublish(struct tracer *t, const struct pt_blocker_key *key)
{
    return bpf_map_delete_elem(bpf_map__fd(t->skel->maps.slot_index), key) == 0;
}

bool slot_table_give_back(struct tracer *t, uint32_t idx)
{
    return bpf_map_update_elem(bpf_map__fd(t->skel->maps.free_slots), NULL, &idx, BPF_ANY) == 0;
}

uint64_t slot_table_process_exits(const struct tracer *t)
{
    return __atomic_load_n(&t->skel->bss->process_exits, __ATOMIC_ACQUIRE);
}

uint64_t slot_table_stack_entries_made(const struct tracer *t)
{
    return __atomic_load_n(&t->skel->bss->stack_entries_made, __ATOMIC_ACQUIRE);
}
