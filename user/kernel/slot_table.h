/* The kernel's blocker table as the collector recycles it: a blocker's key
 * taken out of the index (slot_index), a slot given back (free_ring), and
 * the counters that say when to look (process_exits, stack_entries_made).
 * The slots themselves are read through the tracer's mapping (loader.h). */
#ifndef PT_SLOT_TABLE_H
#define PT_SLOT_TABLE_H
#include <stdbool.h>
#include <stdint.h>
#include "../bpf/parktrace.h"

struct tracer;

/* Takes the N KEYS out of the index, GONE[i] saying whether KEYS[i] was
 * there: as few system calls as the keys missing allow. */
void slot_table_unpublish(struct tracer *t, const struct pt_blocker_key *keys, uint32_t n, bool *gone);
/* Gives slot IDX back to the kernel's free list: false when refused. */
bool slot_table_give_back(struct tracer *t, uint32_t idx);

/* Processes the kernel saw exit, and stack_time entries it made, so far. */
uint64_t slot_table_process_exits(const struct tracer *t);
uint64_t slot_table_stack_entries_made(const struct tracer *t);

#endif
