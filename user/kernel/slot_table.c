#include "slot_table.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "parktrace.skel.h"

void slot_table_unpublish(struct tracer *t, const struct pt_blocker_key *keys, uint32_t n, bool *gone)
{
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    int fd = bpf_map__fd(t->skel->maps.slot_index);
    /* A batch stops at the first key it cannot delete: that one was not
     * there, and the rest go on in the next call. */
    for (uint32_t done = 0; done < n;) {
        uint32_t count = n - done;
        int err = bpf_map_delete_batch(fd, keys + done, &count, &opts);
        for (uint32_t i = 0; i < count && done + i < n; i++)
            gone[done + i] = true;
        done += count;
        if (err && done < n)
            gone[done++] = false;
    }
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
