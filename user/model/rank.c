#include "rank.h"

#include <stdlib.h>

/* IDLE_LAST: idle housekeeping rows go after the contention. */
static int by_time(const struct pt_row *x, const struct pt_row *y, bool idle_last)
{
    if (idle_last && x->idle != y->idle)
        return x->idle ? 1 : -1;
    if (x->fig.thread_time_ns != y->fig.thread_time_ns)
        return x->fig.thread_time_ns > y->fig.thread_time_ns ? -1 : 1;
    return x->fig.parks > y->fig.parks ? -1 : x->fig.parks < y->fig.parks;
}

static int by_pressure(const struct pt_row *x, const struct pt_row *y, bool idle_last)
{
    if (idle_last && x->idle != y->idle)
        return x->idle ? 1 : -1;
    if (x->has_csp != y->has_csp)
        return x->has_csp ? -1 : 1;
    if (x->has_csp && x->csp != y->csp)
        return x->csp > y->csp ? -1 : 1;
    return by_time(x, y, idle_last);
}

/* qsort moves pointers, not rows of several hundred bytes. ARG points to
 * the idle_last flag. */
static int ptr_by_time(const void *a, const void *b, void *arg)
{
    return by_time(*(struct pt_row *const *)a, *(struct pt_row *const *)b, *(const bool *)arg);
}

static int ptr_by_pressure(const void *a, const void *b, void *arg)
{
    return by_pressure(*(struct pt_row *const *)a, *(struct pt_row *const *)b, *(const bool *)arg);
}

int rank_rows(struct pt_row *rows, int n, bool by_csp, bool idle_after, int keep, struct pt_row **order,
              struct pt_row *out)
{
    int k = 0;
    if (keep && n > 4 * keep) {
        /* A few kept out of thousands: picked in one pass, most rows losing
         * one comparison against the last kept, instead of sorting all. */
        int (*cmp)(const struct pt_row *, const struct pt_row *, bool) = by_csp ? by_pressure : by_time;
        for (int i = 0; i < n; i++) {
            if (k == keep && cmp(&rows[i], order[k - 1], idle_after) >= 0)
                continue;
            int j = k < keep ? k++ : k - 1;
            for (; j > 0 && cmp(&rows[i], order[j - 1], idle_after) < 0; j--)
                order[j] = order[j - 1];
            order[j] = &rows[i];
        }
    } else {
        for (k = 0; k < n; k++)
            order[k] = &rows[k];
        qsort_r(order, (size_t)n, sizeof(*order), by_csp ? ptr_by_pressure : ptr_by_time, &idle_after);
        if (keep && k > keep)
            k = keep;
    }
    for (int i = 0; i < k; i++)
        out[i] = *order[i];
    return k;
}

static int cmp_time(const void *a, const void *b, void *arg)
{
    return by_time(a, b, *(const bool *)arg);
}

static int cmp_pressure(const void *a, const void *b, void *arg)
{
    return by_pressure(a, b, *(const bool *)arg);
}

void rank_sort(struct pt_row *rows, int n, bool by_csp, bool idle_after)
{
    qsort_r(rows, (size_t)n, sizeof(*rows), by_csp ? cmp_pressure : cmp_time, &idle_after);
}
