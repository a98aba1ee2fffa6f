/* The kernel's wait chains (chain_time, bpf/chains.bpf.h): the only code
 * that reads that map; the collector asks it each report. */
#ifndef PT_CHAIN_MAP_H
#define PT_CHAIN_MAP_H
#include <stdbool.h>
#include <stdint.h>

#include "../bpf/parktrace.h"
#include "map_dump.h"

struct tracer;

/* The whole table into D: pt_chain_key and pt_chain_val entries. 0, or -1
 * (none there: chains off; or D holds what was read). */
int chain_map_dump(struct tracer *t, struct map_dump *d);

/* Kernel stack ID (pt_chain_key's end_kstack) into IPS, innermost first,
 * 0 past the last: false when the table has none. */
bool chain_map_kstack(struct tracer *t, uint32_t id, uint64_t ips[PT_CHAIN_KFRAMES]);

/* Deletes the N keys at KEYS (pt_chain_key) from the table. */
void chain_map_delete(struct tracer *t, const void *keys, uint32_t n);

/* Thread TID's name as the kernel read it in a chain, raw (sanitize
 * before printing), into OUT: false when it has none. */
bool chain_map_comm(struct tracer *t, uint32_t tid, char out[PT_COMM_LEN + 1]);

#endif
