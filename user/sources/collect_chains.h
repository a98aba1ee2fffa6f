/* Wait chains for a report (collect_chains.c): what the collector keeps
 * between reports, and the one call that models them. */
#ifndef PT_COLLECT_CHAINS_H
#define PT_COLLECT_CHAINS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/parktrace.h"
#include "kallsyms.h"
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
#define CHAIN_RETIRED_INDEX 4096 /* their hash index's buckets (a power of two) */
struct chain_retired {
    struct pt_model_chain ch;          /* its strings point into text */
    uint64_t hash;                     /* chain_hash(ch) */
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
    int *index[2];                    /* entry + 1 by hash, 0: empty */
    /* By slot, over the run: the end of the chains it starts with the
     * most time, and that time (a report's, for pprof's chain_end). */
    uint8_t *slot_end;
    uint64_t *slot_end_ns;
    uint32_t nslot_end;
    struct chain_thread threads[CHAIN_THREADS];
    struct kallsyms ksyms;            /* read once a chain ends in I/O */
};

struct collector;

/* The top --chains chains into R: of the window (INTERVAL) or of the run. */
void collector_model_chains(struct collector *c, struct pt_model *r, bool interval);

/* The chains that go through a slot being let go (collector->retiring
 * 2): named while their blockers still are, kept, and taken out of the
 * kernel's table. */
void collector_retire_chains(struct collector *c);

/* The end of the chains blocker SLOT starts that hold the most of its
 * time over the run, as of the last report: NULL when it has none. */
const char *collector_chain_end(const struct collector *c, uint32_t slot);

void collector_chains_free(struct collector *c);

#endif
