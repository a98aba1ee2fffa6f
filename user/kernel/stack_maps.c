#include "stack_maps.h"

#include <bpf/bpf.h>
#include <string.h>

#include "loader.h"
#include "map_dump.h"
#include "slot_table.h"

static const size_t key_size[STACK_TIMES_COUNT] = {sizeof(struct pt_stack_key), sizeof(struct pt_waker_key)};
static const size_t val_size[STACK_TIMES_COUNT] = {sizeof(struct pt_stack_val), sizeof(struct pt_waker_val)};

struct stack_maps stack_maps_of(struct tracer *t)
{
    return (struct stack_maps){t->stacks_fd, t->ustacks_fd, t->samples_fd, {t->stack_time_fd, t->waker_time_fd}, t};
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

/* An entry of either table. */
union own_key {
    struct pt_stack_key s;
    struct pt_waker_key w;
};
union own_val {
    struct pt_stack_val s;
    struct pt_waker_val w;
};

/* Slot S's own entry of table WHICH (index I) as the table would hold it:
 * false when it has none. Read while the programs may write it: its key
 * is set once, before its counts. */
static bool own_entry(const struct pt_slot *s, uint32_t i, enum stack_times which, union own_key *key,
                      union own_val *val)
{
    uint64_t k = __atomic_load_n(which == STACK_TIMES_WAITER ? &s->own_key : &s->pair_key, __ATOMIC_ACQUIRE);
    if (!k)
        return false;
    int32_t sid = (int32_t)((uint32_t)k - 1);
    if (which == STACK_TIMES_WAITER) {
        key->s = (struct pt_stack_key){.slot = i, .stack_id = sid, .tgid = s->first_tgid};
        struct pt_stack_val *v = &val->s;
        v->count = __atomic_load_n(&s->own.count, __ATOMIC_RELAXED);
        v->ns = __atomic_load_n(&s->own.ns, __ATOMIC_RELAXED);
    } else {
        key->w = (struct pt_waker_key){.slot = i, .stack_id = sid, .tgid = s->first_tgid,
                                       .waker_stack = (int32_t)((uint32_t)(k >> 32) - 1), .waker_tgid = s->first_tgid};
        struct pt_waker_val *v = &val->w;
        v->count = __atomic_load_n(&s->pair.count, __ATOMIC_RELAXED);
        v->ns = __atomic_load_n(&s->pair.ns, __ATOMIC_RELAXED);
        v->line_count = __atomic_load_n(&s->pair.line_count, __ATOMIC_RELAXED);
        v->line_ns = __atomic_load_n(&s->pair.line_ns, __ATOMIC_RELAXED);
    }
    return true;
}

int stack_maps_dump(const struct stack_maps *sm, enum stack_times which, struct map_dump *d)
{
    return stack_maps_dump_of(sm, which, d, NULL, NULL);
}

int stack_maps_dump_of(const struct stack_maps *sm, enum stack_times which, struct map_dump *d,
                       bool (*want)(void *ctx, uint32_t slot), void *ctx)
{
    int rc = map_dump(sm->times_fd[which], key_size[which], val_size[which], d);
    if (!sm->slots_of)
        return rc;
    const struct pt_slot *slots = sm->slots_of->slots;
    union own_key key;
    union own_val val;
    for (uint32_t i = 0, n = tracer_used_slots(sm->slots_of); i < n; i++)
        if ((!want || want(ctx, i)) && own_entry(&slots[i], i, which, &key, &val))
            map_dump_add(d, &key, key_size[which], &val, val_size[which]);
    return rc;
}

/* Whether KEY (of table WHICH) is its slot's own entry. */
static bool own_key(const struct stack_maps *sm, enum stack_times which, const void *key)
{
    uint32_t slot = ((const struct pt_stack_key *)key)->slot;   /* a waker key starts as one */
    union own_key mine;
    union own_val val;
    return sm->slots_of && slot < sm->slots_of->nslots &&
           own_entry(&sm->slots_of->slots[slot], slot, which, &mine, &val) && !memcmp(&mine, key, key_size[which]);
}

void stack_maps_delete(const struct stack_maps *sm, enum stack_times which, void *keys, uint32_t n)
{
    size_t ksz = key_size[which];
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        char *k = (char *)keys + (size_t)i * ksz;
        if (own_key(sm, which, k))
            continue;      /* not in the table: asking it to delete costs a call */
        if (kept != i)
            memcpy((char *)keys + (size_t)kept * ksz, k, ksz);
        kept++;
    }
    map_delete_keys(sm->times_fd[which], keys, ksz, kept);
}
