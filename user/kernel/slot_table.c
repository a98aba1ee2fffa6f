#include "slot_table.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "parktrace.skel.h"

bool slot_table_unpublish(struct tracer *t, const struct pt_blocker_key *key)
{
    return bpf_map_delete_elem(bpf_map__fd(t->skel->maps.slot_index), key) == 0;
}

/* Into the ring the programs take new blockers' slots from (free_ring,
 * bpf/slots.bpf.h): the entry first, then the head that publishes it. */
bool slot_table_give_back(struct tracer *t, uint32_t idx)
{
    uint64_t head = t->skel->bss->free_head;
    if (!t->free_ring || !t->nslots || head - __atomic_load_n(&t->skel->bss->free_tail, __ATOMIC_ACQUIRE) >= t->nslots)
        return false;
    __atomic_store_n(&t->free_ring[head % t->nslots], idx, __ATOMIC_RELAXED);
    __atomic_store_n(&t->skel->bss->free_head, head + 1, __ATOMIC_RELEASE);
    return true;
}

uint64_t slot_table_process_exits(const struct tracer *t)
{
    return __atomic_load_n(&t->skel->bss->process_exits, __ATOMIC_ACQUIRE);
}

uint64_t slot_table_stack_entries_made(const struct tracer *t)
{
    return __atomic_load_n(&t->skel->bss->stack_entries_made, __ATOMIC_ACQUIRE);
}
