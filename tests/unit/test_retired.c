/* Recycled blockers' sites (retired.c): a site keeps its idle members
 * apart from the rest, as the report's folded rows do (group.c), and the
 * two rows add up to what was retired. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "retired.h"

static struct pt_frame service_frames[] = {
    {(char *)"os::PlatformMonitor::wait(long)", (char *)"libjvm.so"},
    {(char *)"ServiceThread::service_thread_entry(JavaThread*, JavaThread*)", (char *)"libjvm.so"},
};
static struct pt_frame java_frames[] = {
    {(char *)"os::PlatformMonitor::wait(long)", (char *)"libjvm.so"},
    {(char *)"App.work", (char *)"[java]"},
};
static const struct pt_stack service = {.n = 2, .frames = service_frames, .unwound = true, .naming = 1};
static const struct pt_stack java = {.n = 2, .frames = java_frames, .unwound = true, .naming = 2};

static struct retired_member member(const struct pt_stack *st, bool idle, uint64_t ns)
{
    struct retired_member m = {.pid = 42, .kind = "futex", .cls = "pthread_cond", .site = "os::PlatformMonitor::wait(long)",
                               .comm = "java", .thread = idle ? "Service Thread" : "worker", .wait = true,
                               .idle = idle, .first_stack = st};
    m.final.parks = 10;
    m.final.thread_ns = ns;
    return m;
}

int main(void)
{
    struct retired *r = calloc(1, sizeof(*r));
    CHECK(r != NULL, "allocated");
    /* The service thread's waits are the heavier: the site once showed its
     * stack while the worker made the whole site contention. */
    struct retired_member idle = member(&service, true, 9000000000ull), busy = member(&java, false, 5000000);
    busy.id = 0x7f00dead0040ull;
    busy.cgroup = "/system.slice/app.service";
    retired_add(r, &idle);
    retired_add(r, &busy);
    retired_add(r, &idle);
    struct pt_row rows[4];
    memset(rows, 0, sizeof(rows));
    uint64_t waits = 0, blockers = 0;
    int n = retired_rows(r, false, 0, 1000000000000ull, rows, &waits, &blockers);
    CHECK(n == 2, "an idle and a busy member of one site make two rows (got %d)", n);
    int busy_row = n == 2 && rows[0].idle ? 1 : 0;
    CHECK(n == 2 && rows[busy_row].idle == false && rows[1 - busy_row].idle == true, "one row idle, one not");
    CHECK(n == 2 && rows[1 - busy_row].objects == 2 && rows[busy_row].objects == 1, "the idle row holds both idle members");
    CHECK(n == 2 && rows[busy_row].first_stack && rows[busy_row].first_stack->frames[1].name &&
              strcmp(rows[busy_row].first_stack->frames[1].name, "App.work") == 0,
          "the contention row shows the busy member's stack");
    /* A site of one blocker shows that blocker's id, not 0x0 (an embedded
     * database's report had a recycled mutex's row read 0x0); a site of
     * several shows none. */
    CHECK(n == 2 && rows[busy_row].id == 0x7f00dead0040ull && rows[1 - busy_row].id == 0,
          "a site of one blocker keeps its id (%#llx), one of two none (%#llx)",
          (unsigned long long)rows[busy_row].id, (unsigned long long)rows[1 - busy_row].id);
    CHECK(waits == 30, "every retired wait is counted (%llu)", (unsigned long long)waits);
    CHECK(n == 2 && rows[0].fig.thread_time_ns + rows[1].fig.thread_time_ns == 2 * 9000000000ull + 5000000,
          "the rows' time adds up");
    retired_free(r);
    free(r);
    return CHECK_DONE();
}
