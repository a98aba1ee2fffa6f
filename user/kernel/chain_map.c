#include "chain_map.h"

#include <bpf/bpf.h>
#include <string.h>

#include "loader.h"

int chain_map_dump(struct tracer *t, struct map_dump *d)
{
    if (t->chain_time_fd < 0)
        return -1;
    return map_dump(t->chain_time_fd, sizeof(struct pt_chain_key), sizeof(struct pt_chain_val), d);
}

bool chain_map_comm(struct tracer *t, uint32_t tid, char out[PT_COMM_LEN + 1])
{
    struct pt_chain_comm c;
    if (t->chain_comms_fd < 0 || bpf_map_lookup_elem(t->chain_comms_fd, &tid, &c) != 0)
        return false;
    memcpy(out, c.comm, sizeof(c.comm));
    out[sizeof(c.comm)] = '\0';
    return true;
}

void chain_map_delete(struct tracer *t, const void *keys, uint32_t n)
{
    if (t->chain_time_fd >= 0 && n)
        map_delete_keys(t->chain_time_fd, keys, sizeof(struct pt_chain_key), n);
}

bool chain_map_kstack(struct tracer *t, uint32_t id, uint64_t ips[PT_CHAIN_KFRAMES])
{
    struct pt_chain_kstack k;
    if (t->chain_kstacks_fd < 0 || !id || bpf_map_lookup_elem(t->chain_kstacks_fd, &id, &k) != 0)
        return false;
    memcpy(ips, k.ip, sizeof(k.ip));
    return true;
}
