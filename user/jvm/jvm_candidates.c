#include "jvm_candidates.h"

#include <stdlib.h>
#include <string.h>

#include "procstatus.h"

/* Open addressing on the pid, twice as many slots as entries, so a probe
 * always ends; the index is rebuilt after each compaction. */
#define SLOTS (2 * JVM_CANDIDATES_MAX)

struct jvm_candidates {
    struct jvm_candidate cands[JVM_CANDIDATES_MAX];
    int32_t slots[SLOTS];    /* index into cands, or -1 */
    int ncands;
};

struct jvm_candidates *jvm_candidates_new(void)
{
    struct jvm_candidates *jc = calloc(1, sizeof(*jc));
    if (jc)
        memset(jc->slots, 0xff, sizeof(jc->slots));
    return jc;
}

void jvm_candidates_free(struct jvm_candidates *jc)
{
    free(jc);
}

static int32_t *slot_of(struct jvm_candidates *jc, int pid)
{
    uint32_t h = (uint32_t)pid * 2654435761u % SLOTS;
    while (jc->slots[h] >= 0 && jc->cands[jc->slots[h]].pid != pid)
        h = (h + 1) % SLOTS;
    return &jc->slots[h];
}

struct jvm_candidate *jvm_candidates_find(struct jvm_candidates *jc, int pid)
{
    if (!jc)
        return NULL;
    int32_t i = *slot_of(jc, pid);
    return i >= 0 ? &jc->cands[i] : NULL;
}

/* Drops the settled and the exited entries (a settled process is looked at
 * afresh if it shows up again); if none can go, the oldest pending one. */
static void make_room(struct jvm_candidates *jc, uint64_t *evicted)
{
    struct jvm_candidate *cands = jc->cands;
    int ncands = jc->ncands, kept = 0, oldest = -1;
    for (int i = 0; i < ncands; i++)
        if (!cands[i].settled && !procstatus_gone(cands[i].pid))
            cands[kept++] = cands[i];
    if (kept == ncands) {
        for (int i = 0; i < ncands; i++)
            if (oldest < 0 || cands[i].first_seen < cands[oldest].first_seen)
                oldest = i;
        cands[oldest] = cands[--kept];
        (*evicted)++;
    }
    jc->ncands = kept;
    memset(jc->slots, 0xff, sizeof(jc->slots));
    for (int i = 0; i < kept; i++)
        *slot_of(jc, cands[i].pid) = i;
}

struct jvm_candidate *jvm_candidates_add(struct jvm_candidates *jc, int pid, uint64_t now, uint64_t *evicted)
{
    struct jvm_candidate *c = jvm_candidates_find(jc, pid);
    if (c || !jc)
        return c;
    if (jc->ncands == JVM_CANDIDATES_MAX)
        make_room(jc, evicted);
    jc->cands[jc->ncands] = (struct jvm_candidate){.pid = pid, .first_seen = now};
    *slot_of(jc, pid) = jc->ncands;
    return &jc->cands[jc->ncands++];
}

struct jvm_candidate *jvm_candidates_at(struct jvm_candidates *jc, int n)
{
    return &jc->cands[n];
}

int jvm_candidates_count(const struct jvm_candidates *jc)
{
    return jc ? jc->ncands : 0;
}
