/* --by class and --by site: rows of one process merged by the blocker's
 * class, or by the application frame that waited; and the default view's
 * folding of small rows of one site. */
#ifndef PT_GROUP_H
#define PT_GROUP_H
#include "options.h"
#include "model.h"

/* Merges R's rows in place. The merged row keeps the identity, first
 * thread and stack of its member with the most thread time. */
void group_rows(struct pt_model *r, enum pt_group by);

/* The default view: R's rows other than the K that PICKED points to (the
 * top rows) are folded per (pid, kind, class, waiting site) into one row
 * each, which counts its blockers in `objects`; the top rows stay as they
 * are, in their order. Contention spread over many short-lived objects
 * then ranks by its total (metrics.md, "The default view"). */
void fold_rows(struct pt_model *r, struct pt_row *const *picked, int k);

/* Merges the rows of one object's parts into one row, counted as one
 * blocker in R's totals: the two futex words of a glibc condition
 * variable (the same aligned 8 bytes of one process; the row at the lower
 * address), the three semaphores of a Go sync.RWMutex. */
void merge_object_parts(struct pt_model *r);

/* After ranking ROWS[0..N) (the K shown ones copied to SHOWN, PICKED
 * pointing at their originals): a row pushed out by a folded row of its
 * own site joins it, so that what a shown group stands for is all of its
 * site below the top; the others are added to REST. SHOWN must be sorted
 * again after. */
void fold_dropped(struct pt_row *shown, int k, const struct pt_row *rows, int n, struct pt_row *const *picked,
                  struct pt_rest *rest);

/* Adds ROW to what the report leaves out. */
void rest_add(struct pt_rest *rest, const struct pt_row *row);

/* Adds the rows of ROWS[0..N) that are not among the K that PICKED points
 * to (the shown ones) to REST. */
void rest_of(const struct pt_row *rows, int n, struct pt_row *const *picked, int k, struct pt_rest *rest);

#endif
