#include "stack_maps.h"

#include <bpf/bpf.h>

#include "loader.h"

static const size_t key_size[STACK_TIMES_COUNT] = {sizeof(struct pt_stack_key), sizeof(struct pt_waker_key)};
static const size_t val_size[STACK_TIMES_COUNT] = {sizeof(struct pt_stack_val), sizeof(struct pt_waker_val)};

struct stack_maps stack_maps_of(struct tracer *t)
{
    return (struct stack_maps){t->stacks_fd, t->ustacks_fd, t->samples_fd, {t->stack_time_fd, t->waker_time_fd}};
}

bool stack_maps_have_ustacks(const struct stack_maps *sm)
{
    return sm->ustacks_fd >= 0;
}

bool stack_maps_have_samples(const struct stack_maps *sm)
{
    return sm->samples_fd >= 0;
}

bool stack_maps_have_times(const struct stack_maps *sm, enum stack_times which)
{
    return sm->times_fd[which] >= 0;
}

bool stack_maps_fp(const struct stack_maps *sm, int id, uint64_t *ips)
{
    return sm->stacks_fd >= 0 && id >= 0 && bpf_map_lookup_elem(sm->stacks_fd, &id, ips) == 0;
}

bool stack_maps_ustack(const struct stack_maps *sm, int id, struct pt_ustack *out)
{
    return sm->ustacks_fd >= 0 && bpf_map_lookup_elem(sm->ustacks_fd, &id, out) == 0;
}

int stack_maps_sample_keys(const struct stack_maps *sm, struct pt_sample_key *keys, int max)
{
    int n = 0;
    struct pt_sample_key next;
    while (sm->samples_fd >= 0 && n < max &&
           !bpf_map_get_next_key(sm->samples_fd, n ? &keys[n - 1] : NULL, &next))
        keys[n++] = next;
    return n;
}

bool stack_maps_sample(const struct stack_maps *sm, const struct pt_sample_key *key, struct pt_sample *out)
{
    return bpf_map_lookup_elem(sm->samples_fd, key, out) == 0;
}

void stack_maps_drop_sample(const struct stack_maps *sm, const struct pt_sample_key *key)
{
    bpf_map_delete_elem(sm->samples_fd, key);
}

int stack_maps_dump(const struct stack_maps *sm, enum stack_times which, struct map_dump *d)
{
    return map_dump(sm->times_fd[which], key_size[which], val_size[which], d);
}

void stack_maps_delete(const struct stack_maps *sm, enum stack_times which, const void *keys, uint32_t n)
{
    map_delete_keys(sm->times_fd[which], keys, key_size[which], n);
}
