/* The order of a report's rows: most thread time first, or most pressure
 * (CSP) first with rows without one after. */
#ifndef PT_RANK_H
#define PT_RANK_H
#include <stdbool.h>
#include "model.h"

/* Puts the best KEEP of ROWS[0..N) (all when KEEP is 0) in order into OUT,
 * using ORDER (room for N pointers) as scratch; returns how many. */
int rank_rows(struct pt_row *rows, int n, bool by_csp, int keep, struct pt_row **order, struct pt_row *out);

#endif
