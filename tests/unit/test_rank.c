/* Report row order: the one-pass pick of the top rows must agree with a
 * full sort, for both orders, ties included. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rank.h"

#define N 2000

static struct pt_row rows[N], out[N], full[N];
static struct pt_row *order[N];

/* Rows with many ties: thread time from a few values, parks and CSP too. */
static void fill(unsigned seed)
{
    srand(seed);
    for (int i = 0; i < N; i++) {
        memset(&rows[i], 0, sizeof(rows[i]));
        rows[i].src = (uint32_t)i;
        rows[i].fig.thread_time_ns = (uint64_t)(rand() % 50) * 1000;
        rows[i].fig.parks = (uint64_t)(rand() % 5);
        rows[i].has_csp = rand() % 3 != 0;
        rows[i].csp = rows[i].has_csp ? (rand() % 20) / 20.0 : 0;
    }
}

static bool same(const struct pt_row *a, const struct pt_row *b, int n, bool by_csp)
{
    /* Equal rows may come in either order: compare the sort keys. */
    for (int i = 0; i < n; i++)
        if (a[i].fig.thread_time_ns != b[i].fig.thread_time_ns || a[i].fig.parks != b[i].fig.parks ||
            (by_csp && (a[i].has_csp != b[i].has_csp || a[i].csp != b[i].csp)))
            return false;
    return true;
}

static bool in_order(const struct pt_row *r, int n, bool by_csp)
{
    for (int i = 1; i < n; i++) {
        const struct pt_row *a = &r[i - 1], *b = &r[i];
        bool ok = by_csp ? (a->has_csp > b->has_csp ||
                            (a->has_csp == b->has_csp && (!b->has_csp || a->csp > b->csp ||
                                                          (a->csp == b->csp &&
                                                           a->fig.thread_time_ns >= b->fig.thread_time_ns))))
                         : a->fig.thread_time_ns >= b->fig.thread_time_ns;
        if (!ok)
            return false;
    }
    return true;
}

int main(void)
{
    for (int by_csp = 0; by_csp < 2; by_csp++) {
        const char *how = by_csp ? "by CSP" : "by thread time";
        bool all_kept = true, sorted = true, kept = true, agree = true;
        for (unsigned seed = 1; seed <= 20; seed++) {
            fill(seed);
            all_kept &= rank_rows(rows, N, by_csp, false, 0, order, full) == N;
            sorted &= in_order(full, N, by_csp);
            for (int keep = 1; keep <= 40; keep += 13) {
                int k = rank_rows(rows, N, by_csp, false, keep, order, out);
                kept &= k == keep;
                agree &= same(out, full, k, by_csp);
            }
        }
        CHECK(all_kept, "%s: keep 0 keeps every row", how);
        CHECK(sorted, "%s: a full sort is in order", how);
        CHECK(kept, "%s: the pick keeps KEEP rows", how);
        CHECK(agree, "%s: the picked rows are the full sort's first ones", how);
        fill(99);
        CHECK(rank_rows(rows, 30, by_csp, false, 20, order, out) == 20 && in_order(out, 20, by_csp),
              "%s: few rows are sorted and cut to KEEP", how);
        CHECK(rank_rows(rows, 0, by_csp, false, 20, order, out) == 0, "%s: no rows, none kept", how);
    }
    return CHECK_DONE();
}
