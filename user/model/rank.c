#include "rank.h"

#include <stdlib.h>

/* The comparison's context: qsort_r passes one pointer. */
struct rank_ctx {
    enum pt_rank_key key;
    bool idle_last;   /* idle housekeeping rows go after the contention */
};

static int by_time(const struct pt_row *x, const struct pt_row *y)
{
    if (x->fig.thread_time_ns != y->fig.thread_time_ns)
        return x->fig.thread_time_ns > y->fig.thread_time_ns ? -1 : 1;
    return x->fig.parks > y->fig.parks ? -1 : x->fig.parks < y->fig.parks;
}

static int by_pressure(const struct pt_row *x, const struct pt_row *y)
{
    if (x->has_csp != y->has_csp)
        return x->has_csp ? -1 : 1;
    if (x->has_csp && x->csp != y->csp)
        return x->csp > y->csp ? -1 : 1;
    return by_time(x, y);
}

static int by_count(uint64_t a, uint64_t b, const struct pt_row *x, const struct pt_row *y)
{
    return a != b ? (a > b ? -1 : 1) : by_time(x, y);
}

static int cmp(const struct pt_row *x, const struct pt_row *y, const struct rank_ctx *c)
{
    if (c->idle_last && x->idle != y->idle)
        return x->idle ? 1 : -1;
    switch (c->key) {
    case PT_RANK_CSP:
        return by_pressure(x, y);
    case PT_RANK_PARKS:
        return by_count(x->fig.parks, y->fig.parks, x, y);
    case PT_RANK_PEAK:
        return by_count(x->fig.peak_parked, y->fig.peak_parked, x, y);
    default:
        return by_time(x, y);
    }
}

/* qsort moves pointers, not rows of several hundred bytes. */
static int cmp_ptr(const void *a, const void *b, void *arg)
{
    return cmp(*(struct pt_row *const *)a, *(struct pt_row *const *)b, arg);
}

static int cmp_row(const void *a, const void *b, void *arg)
{
    return cmp(a, b, arg);
}

int rank_rows(struct pt_row *rows, int n, enum pt_rank_key key, bool idle_after, int keep, struct pt_row **order,
              struct pt_row *out)
{
    struct rank_ctx c = {key, idle_after};
    int k = 0;
    if (keep && n > 4 * keep) {
        /* A few kept out of thousands: picked in one pass, most rows losing
         * one comparison against the last kept, instead of sorting all. */
        for (int i = 0; i < n; i++) {
            if (k == keep && cmp(&rows[i], order[k - 1], &c) >= 0)
                continue;
            int j = k < keep ? k++ : k - 1;
            for (; j > 0 && cmp(&rows[i], order[j - 1], &c) < 0; j--)
                order[j] = order[j - 1];
            order[j] = &rows[i];
        }
    } else {
        for (k = 0; k < n; k++)
            order[k] = &rows[k];
        qsort_r(order, (size_t)n, sizeof(*order), cmp_ptr, &c);
        if (keep && k > keep)
            k = keep;
    }
    for (int i = 0; i < k; i++)
        out[i] = *order[i];
    return k;
}

void rank_sort(struct pt_row *rows, int n, enum pt_rank_key key, bool idle_after)
{
    struct rank_ctx c = {key, idle_after};
    qsort_r(rows, (size_t)n, sizeof(*rows), cmp_row, &c);
}

void rank_order(const struct pt_row **order, int n, enum pt_rank_key key, bool idle_after)
{
    struct rank_ctx c = {key, idle_after};
    qsort_r(order, (size_t)n, sizeof(*order), cmp_ptr, &c);
}

const char *rank_key_name(enum pt_rank_key key)
{
    static const char *const names[PT_RANK_COUNT] = {"time", "csp", "parks", "peak"};
    return key < PT_RANK_COUNT ? names[key] : "?";
}
