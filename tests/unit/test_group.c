/* --by site and --by class: a group's class, name and figures whatever the
 * order in which its members come and whichever is the heavier; one Go
 * RWMutex's parts merged. */
#include <string.h>

#include "check.h"
#include "group.h"

static struct pt_row row(const char *cls, const char *site, const char *name, uint64_t thread_ns, uint64_t parks)
{
    struct pt_row r = {.kind = "jvm-park", .pid = 7, .cls = cls, .top_frame = site, .name = name};
    r.fig.thread_time_ns = thread_ns;
    r.fig.parks = parks;
    return r;
}

/* Groups three rows of one site, two classes, by BY; the heavier member
 * comes first or last as HEAVY_LAST says. */
static void one_site(enum pt_group by, bool heavy_last)
{
    struct pt_row rows[3] = {row("Fair", "Site.run", "a", 100, 1), row("Fair", "Site.run", "a", 200, 2),
                             row("Nonfair", "Site.run", "a", 900, 3)};
    if (!heavy_last) {
        struct pt_row t = rows[0];
        rows[0] = rows[2];
        rows[2] = t;
    }
    struct pt_model r = {.rows = rows, .nrows = 3};
    group_rows(&r, by);
    const char *how = heavy_last ? "heaviest last" : "heaviest first";
    if (by == PT_BY_SITE) {
        CHECK(r.nrows == 1, "--by site, %s: one row (got %d)", how, r.nrows);
        CHECK(strcmp(r.rows[0].cls, "(several)") == 0, "--by site, %s: class (several) (got %s)", how,
              r.rows[0].cls);
        CHECK(r.rows[0].fig.thread_time_ns == 1200 && r.rows[0].fig.parks == 6,
              "--by site, %s: figures add up (%llu ns, %llu parks)", how,
              (unsigned long long)r.rows[0].fig.thread_time_ns, (unsigned long long)r.rows[0].fig.parks);
        CHECK(r.rows[0].name && strcmp(r.rows[0].name, "a") == 0, "--by site, %s: a name all share stays", how);
    } else {
        CHECK(r.nrows == 2, "--by class, %s: a row per class (got %d)", how, r.nrows);
        uint64_t fair = 0;
        for (int i = 0; i < r.nrows; i++)
            fair += strcmp(r.rows[i].cls, "Fair") == 0 ? r.rows[i].fig.thread_time_ns : 0;
        CHECK(fair == 300, "--by class, %s: the Fair row holds its members' time (got %llu)", how,
              (unsigned long long)fair);
    }
}

/* The default view: the picked rows stay as they are, in their order, and
 * the others fold per site into one row each, wherever they sit among the
 * picked ones (rows move down in place as others fold). */
static void fold_keeps_top_rows(void)
{
    struct pt_row rows[6] = {row("A", "Small.run", "s1", 10, 1), row("Big", "Big.run", "b", 5000, 50),
                             row("A", "Small.run", "s2", 20, 2), row("B", "Other.run", "o1", 7, 1),
                             row("Huge", "Huge.run", "h", 9000, 90), row("A", "Small.run", "s3", 30, 3)};
    struct pt_row *picked[2] = {&rows[4], &rows[1]};
    struct pt_model r = {.rows = rows, .nrows = 6};
    for (int i = 0; i < 6; i++)
        rows[i].objects = 1;
    fold_rows(&r, picked, 2);
    CHECK(r.nrows == 4, "fold: two top rows and two sites (got %d rows)", r.nrows);
    if (r.nrows != 4)
        return;
    CHECK(strcmp(r.rows[0].top_frame, "Small.run") == 0 && r.rows[0].objects == 3 &&
              r.rows[0].fig.thread_time_ns == 60 && r.rows[0].fig.parks == 6,
          "fold: Small.run's three rows are one, in the first one's place (%s, %u objects, %llu ns)",
          r.rows[0].top_frame, r.rows[0].objects, (unsigned long long)r.rows[0].fig.thread_time_ns);
    CHECK(strcmp(r.rows[1].cls, "Big") == 0 && r.rows[1].objects == 1 && r.rows[1].fig.thread_time_ns == 5000,
          "fold: the top row Big stays whole and in order (%s)", r.rows[1].cls);
    CHECK(strcmp(r.rows[2].top_frame, "Other.run") == 0 && r.rows[2].objects == 1 &&
              r.rows[2].fig.thread_time_ns == 7,
          "fold: a site of one row stays one row (%s)", r.rows[2].top_frame);
    CHECK(strcmp(r.rows[3].cls, "Huge") == 0 && r.rows[3].fig.thread_time_ns == 9000 && r.rows[3].objects == 1,
          "fold: the top row Huge moved down whole (%s, %llu ns)", r.rows[3].cls,
          (unsigned long long)r.rows[3].fig.thread_time_ns);
}

/* A Go RWMutex's three semaphores' rows (one id: the RWMutex's) are one
 * row and one blocker; another RWMutex, a Mutex at the same id in another
 * process, and a futex row stay apart. */
static void rwmutex_parts_merge(void)
{
    struct pt_row rows[6];
    const char *cls[6] = {"sync.RWMutex", "sync.RWMutex", "sync.Mutex", "sync.RWMutex", "sync.RWMutex", "futex"};
    const uint64_t ids[6] = {0x5000, 0x5000, 0x6000, 0x5000, 0x7000, 0x5000};
    const int pids[6] = {7, 7, 7, 7, 7, 7};
    for (int i = 0; i < 6; i++) {
        rows[i] = row(cls[i], "main.worker", NULL, 100 * (uint64_t)(i + 1), 1);
        rows[i].kind = i == 5 ? "futex" : "go-park";
        rows[i].id = ids[i];
        rows[i].pid = pids[i];
        rows[i].objects = 1;
    }
    struct pt_model r = {.rows = rows, .nrows = 6, .totals = {.blockers = 6}};
    merge_object_parts(&r);
    int merged = -1;
    for (int i = 0; i < r.nrows; i++)
        if (!strcmp(r.rows[i].kind, "go-park") && r.rows[i].id == 0x5000)
            merged = merged < 0 ? i : 99;
    CHECK(r.nrows == 4 && merged >= 0 && merged != 99, "three parts of one RWMutex are one row (%d rows)", r.nrows);
    CHECK(merged >= 0 && merged != 99 && r.rows[merged].fig.thread_time_ns == 100 + 200 + 400 &&
          r.rows[merged].fig.parks == 3 && r.rows[merged].objects == 1 && r.totals.blockers == 4,
          "its figures add up, one object, one blocker in the totals");
}

int main(void)
{
    rwmutex_parts_merge();
    fold_keeps_top_rows();
    for (int heavy_last = 0; heavy_last < 2; heavy_last++) {
        one_site(PT_BY_SITE, heavy_last);
        one_site(PT_BY_CLASS, heavy_last);
    }
    return CHECK_DONE();
}
