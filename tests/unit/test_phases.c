/* Phases over a long run: the oldest closed ones go past PHASES_KEEP,
 * counted, while open ones stay and keep their place for their blocker;
 * a phase keeps its class whatever becomes of its blocker's string. */
#include <string.h>

#include "check.h"
#include "phases.h"

int main(void)
{
    struct phases ph = {0};
    struct timespec t = {0};
    char cls[32];
    /* One lock stays in its phase from the start; 3 * PHASES_KEEP others
     * each have one phase of one interval. */
    int open = -1;
    strcpy(cls, "LongLock");
    phases_feed(&ph, &open, 1, 1, cls, NULL, 0.9, 0.05, t);
    strcpy(cls, "overwritten");
    CHECK(strcmp(ph.p[open].cls, "LongLock") == 0, "a phase keeps a copy of its class (got %s)", ph.p[open].cls);
    int moved = 0;
    for (int i = 0; i < 3 * PHASES_KEEP; i++) {
        int cur = -1;
        t.tv_sec = i + 1;
        phases_feed(&ph, &cur, 2, (uint64_t)i + 100, "Short", NULL, 0.5, 0.05, t);
        t.tv_sec = i + 2;
        phases_feed(&ph, &cur, 2, (uint64_t)i + 100, "Short", NULL, 0.0, 0.05, t);
        phases_feed(&ph, &open, 1, 1, "LongLock", NULL, 0.9, 0.05, t);
        int map[4 * PHASES_KEEP];
        if (phases_trim(&ph, map)) {
            open = map[open];
            moved++;
        }
    }
    CHECK(moved > 0, "phases were trimmed over %d of them", 3 * PHASES_KEEP);
    CHECK(ph.n <= 2 * PHASES_KEEP, "at most 2 * PHASES_KEEP phases kept (got %d)", ph.n);
    CHECK(open >= 0 && ph.p[open].open && ph.p[open].id == 1 && ph.p[open].intervals == 3 * PHASES_KEEP + 1,
          "the open phase stays, with every interval (%d)", open >= 0 ? ph.p[open].intervals : -1);
    CHECK(ph.forgotten + (uint64_t)ph.n == 3 * PHASES_KEEP + 1, "kept %d + forgotten %llu = every phase", ph.n,
          (unsigned long long)ph.forgotten);
    /* The newest closed phase is kept, the oldest went. */
    CHECK(ph.p[ph.n - 1].id == 3 * PHASES_KEEP + 99, "the newest phase kept (id %llu)",
          (unsigned long long)ph.p[ph.n - 1].id);
    bool oldest = false;
    for (int i = 0; i < ph.n; i++)
        oldest |= ph.p[i].id == 100;
    CHECK(!oldest, "the oldest closed phase went");
    phases_free(&ph);
    return CHECK_DONE();
}
