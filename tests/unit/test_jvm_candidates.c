/* The JVM tracker's candidate table: a user who starts processes without
 * end must not fill it for good (issue 12, item 8). */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "jvm_candidates.h"

#define GONE_PID 5000000   /* above the largest pid_max: no such process */

static bool all_found(struct jvm_candidates *jc, int first, int n)
{
    for (int i = 0; i < n; i++) {
        struct jvm_candidate *c = jvm_candidates_find(jc, first + i);
        if (!c || c->pid != first + i)
            return false;
    }
    return true;
}

int main(void)
{
    uint64_t evicted = 0;
    struct jvm_candidates *jc = jvm_candidates_new();
    for (int i = 0; i < JVM_CANDIDATES_MAX; i++)
        jvm_candidates_add(jc, GONE_PID + i, 1, &evicted);
    CHECK(jvm_candidates_count(jc) == JVM_CANDIDATES_MAX && all_found(jc, GONE_PID, JVM_CANDIDATES_MAX),
          "fills to %d, every pid found", JVM_CANDIDATES_MAX);

    struct jvm_candidate *me = jvm_candidates_add(jc, getpid(), 2, &evicted);
    CHECK(me && me->pid == getpid() && jvm_candidates_count(jc) == 1 && evicted == 0,
          "full of exited processes: they go, a new one gets in (%d left, %llu evicted)", jvm_candidates_count(jc),
          (unsigned long long)evicted);
    me->settled = true;

    /* Settled entries go even while their process lives (looked at afresh
     * if seen again); the pending live one stays. */
    for (int i = 1; i < JVM_CANDIDATES_MAX; i++)
        jvm_candidates_add(jc, GONE_PID + i, 3, &evicted)->settled = true;
    struct jvm_candidate *pending = jvm_candidates_find(jc, GONE_PID + 1);
    pending->settled = false;
    pending->pid = getppid();   /* alive: the one entry that must stay */
    /* The index is by pid: rebuild it the way a compaction does. */
    struct jvm_candidate *c = jvm_candidates_add(jc, GONE_PID - 1, 4, &evicted);
    CHECK(c && jvm_candidates_count(jc) == 2 && evicted == 0 && jvm_candidates_find(jc, getppid()) &&
              jvm_candidates_find(jc, GONE_PID - 1) && !jvm_candidates_find(jc, getpid()),
          "settled entries make room, a pending live one stays (%d left)", jvm_candidates_count(jc));

    for (int i = 0; i < 5000; i++)
        jvm_candidates_add(jc, GONE_PID + 100000 + i, 5, &evicted);
    CHECK(all_found(jc, GONE_PID + 100000, 5000) && jvm_candidates_count(jc) == 5002, "lookups after a compaction");
    jvm_candidates_free(jc);
    return CHECK_DONE();
}
