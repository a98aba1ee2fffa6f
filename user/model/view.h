/* The rows a report shows, from every row of its window: a glibc
 * condition variable's two words made one row, rows grouped (--by),
 * ranked, cut to --top, and in the default view the rows that would not
 * make the top folded per site (metrics.md, "The default view"). What is
 * cut is summed in the totals' rest, so the rows shown and the rest add
 * up to the totals whatever the options. */
#ifndef PT_VIEW_H
#define PT_VIEW_H
#include <stdbool.h>
#include "group.h"
#include "model.h"
#include "rank.h"

/* Shapes R's rows (all of its window's, in R->rows) into at most TOP (0:
 * all) ranked by KEY, idle housekeeping last with IDLE_LAST. ORDER (room
 * for R->nrows pointers) and SORTED (as many rows) are scratch; R->rows
 * ends up pointing at SORTED. */
void view_rows(struct pt_model *r, enum pt_group by, int top, enum pt_rank_key key, bool idle_last,
               struct pt_row **order, struct pt_row *sorted);

#endif
