#include "view.h"

void view_rows(struct pt_model *r, enum pt_group by, int top, enum pt_rank_key key, bool idle_last,
               struct pt_row **order, struct pt_row *sorted)
{
    merge_object_parts(r);
    group_rows(r, by);
    r->idle_last = idle_last;
    int n = r->nrows;
    if (by == PT_BY_OBJECT && top && n > top) {
        /* What would not make the top is folded per site, then everything
         * is ranked again. */
        int k = rank_rows(r->rows, n, key, idle_last, top, order, sorted);
        fold_rows(r, order, k);
        n = r->nrows;
        r->nrows = rank_rows(r->rows, n, key, idle_last, top, order, sorted);
        fold_dropped(sorted, r->nrows, r->rows, n, order, &r->totals.rest);
        rank_sort(sorted, r->nrows, key, idle_last);
    } else {
        r->nrows = rank_rows(r->rows, n, key, idle_last, top, order, sorted);
        rest_of(r->rows, n, order, r->nrows, &r->totals.rest);
    }
    r->rows = sorted;
}
