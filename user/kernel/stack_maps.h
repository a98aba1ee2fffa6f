/* The kernel's stack tables: frame-pointer stacks by id (stacks),
 * CFI-unwound stacks by id (ustacks), stack copies waiting to be unwound
 * in user space (samples), and the (blocker, stack) wait times of waiters
 * (stack_time) and of their wakers (waker_time). The only code that
 * touches those maps; stacks.c and the collector ask it. */
#ifndef PT_STACK_MAPS_H
#define PT_STACK_MAPS_H
#include <stdbool.h>
#include <stdint.h>
#include "../bpf/parktrace.h"
#include "map_dump.h"

struct tracer;

enum stack_times { STACK_TIMES_WAITER, STACK_TIMES_WAKER, STACK_TIMES_COUNT };

struct stack_maps {
    int stacks_fd, ustacks_fd, samples_fd;   /* -1: not there */
    int times_fd[STACK_TIMES_COUNT];
    /* Whose slots hold each blocker's first entries of both tables
     * (pt_slot's line 4); NULL: none do. */
    struct tracer *slots_of;
};

/* The tracer's maps. */
struct stack_maps stack_maps_of(struct tracer *t);

/* Whether the kernel keeps CFI-unwound stacks, stack copies, and table
 * WHICH (a test's maps may lack some). */
bool stack_maps_have_ustacks(const struct stack_maps *sm);
bool stack_maps_have_samples(const struct stack_maps *sm);
bool stack_maps_have_times(const struct stack_maps *sm, enum stack_times which);

/* Frame-pointer stack ID's return addresses into IPS (PT_MAX_FRAMES of
 * them, 0 after the last); false when the table has none. */
bool stack_maps_fp(const struct stack_maps *sm, int id, uint64_t *ips);
/* CFI-unwound stack ID into OUT; false when the table let it go. */
bool stack_maps_ustack(const struct stack_maps *sm, int id, struct pt_ustack *out);

/* Up to MAX keys of stack copies waiting, into KEYS: their number. */
int stack_maps_sample_keys(const struct stack_maps *sm, struct pt_sample_key *keys, int max);
bool stack_maps_sample(const struct stack_maps *sm, const struct pt_sample_key *key, struct pt_sample *out);
void stack_maps_drop_sample(const struct stack_maps *sm, const struct pt_sample_key *key);

/* Table WHICH whole into D: pt_stack_key and pt_stack_val, or
 * pt_waker_key and pt_waker_val, the slots' own entries of it after the
 * table's. 0, or -1 (D then holds what was read). */
int stack_maps_dump(const struct stack_maps *sm, enum stack_times which, struct map_dump *d);
/* The same with only the own entries of the slots WANT (with CTX) picks:
 * WANT is asked first, so the slots it leaves out are not read. */
int stack_maps_dump_of(const struct stack_maps *sm, enum stack_times which, struct map_dump *d,
                       bool (*want)(void *ctx, uint32_t slot), void *ctx);
/* Deletes the N keys at KEYS (reordered) from table WHICH; a slot's own
 * entries go with their slot. */
void stack_maps_delete(const struct stack_maps *sm, enum stack_times which, void *keys, uint32_t n);

#endif
