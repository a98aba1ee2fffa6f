/* Wait chains for a report (collect_chains.c): what the collector keeps
 * between reports, and the one call that models them. */
#ifndef PT_COLLECT_CHAINS_H
#define PT_COLLECT_CHAINS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/parktrace.h"
#include "map_dump.h"
#include "model.h"

/* Thread names by tid, as last read (a direct-mapped table). */
#define CHAIN_THREADS 1024
struct chain_thread {
    int tid;
    uint32_t read_gen;      /* the report it was last read at */
    char name[PT_MODEL_COMM];
};

/* A chain whose blockers were let go (recycled), its names copied: what
 * it counted stays in the reports. */
#define CHAIN_RETIRED_MAX 1024   /* groups kept; past that the least timed goes */
struct chain_retired {
    struct pt_model_chain ch;          /* its strings point into text */
    char text[PT_MODEL_CHAIN_LINKS][4][96];   /* kind, class, name, top frame of each link */
};

struct chain_memory {
    struct map_dump now;              /* the kernel's table, as last read */
    /* It at the last interval report, sorted by key: what an interval
     * report subtracts. */
    struct pt_chain_key *keys;
    struct pt_chain_val *vals;
    size_t n;
    uint32_t gen;                     /* reports read so far */
    /* Recycled blockers' chains: since the last interval report, and
     * since the start. */
    struct chain_retired *retired[2];
    int nretired[2];
    struct chain_thread threads[CHAIN_THREADS];
};

struct collector;

/* The top --chains chains into R: of the window (INTERVAL) or of the run. */
void collector_model_chains(struct collector *c, struct pt_model *r, bool interval);

/* The chains that go through a slot being let go (collector->retiring
 * 2): named while their blockers still are, kept, and taken out of the
 * kernel's table. */
void collector_retire_chains(struct collector *c);

void collector_chains_free(struct collector *c);

#endif
