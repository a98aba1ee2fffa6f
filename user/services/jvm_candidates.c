#include "jvm_candidates.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Open addressing on the pid, twice as many slots as entries, so a probe
 * always ends; the index is rebuilt after each compaction. */
#define SLOTS (2 * JVM_CANDIDATES_MAX)

static struct jvm_candidate *cands;
static int32_t *slots;    /* index into cands, or -1 */
static int ncands;

void jvm_candidates_init(void)
{
    cands = calloc(JVM_CANDIDATES_MAX, sizeof(*cands));
    slots = malloc(SLOTS * sizeof(*slots));
    if (slots)
        memset(slots, 0xff, SLOTS * sizeof(*slots));
    ncands = 0;
}

void jvm_candidates_free(void)
{
    free(cands);
    free(slots);
    cands = NULL;
    slots = NULL;
    ncands = 0;
}

static int32_t *slot_of(int pid)
{
    uint32_t h = (uint32_t)pid * 2654435761u % SLOTS;
    while (slots[h] >= 0 && cands[slots[h]].pid != pid)
        h = (h + 1) % SLOTS;
    return &slots[h];
}

struct jvm_candidate *jvm_candidates_find(int pid)
{
    if (!cands || !slots)
        return NULL;
    int32_t i = *slot_of(pid);
    return i >= 0 ? &cands[i] : NULL;
}

static bool gone(int pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

/* Drops the settled and the exited entries (a settled process is looked at
 * afresh if it shows up again); if none can go, the oldest pending one. */
static void make_room(uint64_t *evicted)
{
    int kept = 0, oldest = -1;
    for (int i = 0; i < ncands; i++)
        if (!cands[i].settled && !gone(cands[i].pid))
            cands[kept++] = cands[i];
    if (kept == ncands) {
        for (int i = 0; i < ncands; i++)
            if (oldest < 0 || cands[i].first_seen < cands[oldest].first_seen)
                oldest = i;
        cands[oldest] = cands[--kept];
        (*evicted)++;
    }
    ncands = kept;
    memset(slots, 0xff, SLOTS * sizeof(*slots));
    for (int i = 0; i < ncands; i++)
        *slot_of(cands[i].pid) = i;
}

struct jvm_candidate *jvm_candidates_add(int pid, uint64_t now, uint64_t *evicted)
{
    struct jvm_candidate *c = jvm_candidates_find(pid);
    if (c || !cands || !slots)
        return c;
    if (ncands == JVM_CANDIDATES_MAX)
        make_room(evicted);
    cands[ncands] = (struct jvm_candidate){.pid = pid, .first_seen = now};
    *slot_of(pid) = ncands;
    return &cands[ncands++];
}

struct jvm_candidate *jvm_candidates_at(int n)
{
    return &cands[n];
}

int jvm_candidates_count(void)
{
    return ncands;
}
