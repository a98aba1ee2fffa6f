/* The order of a report's rows: most thread time first, or most pressure
 * (CSP) first with rows without one after; idle housekeeping last. */
#ifndef PT_RANK_H
#define PT_RANK_H
#include <stdbool.h>
#include "model.h"

/* Puts the best KEEP of ROWS[0..N) (all when KEEP is 0) in order into OUT,
 * using ORDER (room for N pointers) as scratch; returns how many. With
 * IDLE_AFTER, idle housekeeping rows come after all the others. */
int rank_rows(struct pt_row *rows, int n, bool by_csp, bool idle_after, int keep, struct pt_row **order,
              struct pt_row *out);

/* Sorts ROWS[0..N) in place in the same order (a few shown rows). */
void rank_sort(struct pt_row *rows, int n, bool by_csp, bool idle_after);

#endif
