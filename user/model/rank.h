/* The order of a report's rows: most thread time, most pressure (CSP, rows
 * without one after), most parks or highest peak parked first; idle
 * housekeeping last unless shown in place. */
#ifndef PT_RANK_H
#define PT_RANK_H
#include <stdbool.h>
#include "model.h"

/* The keys, in the order the live view's `s` cycles through them. The
 * first two are --sort's time and csp (options.h's enum pt_sort). */
enum pt_rank_key { PT_RANK_TIME, PT_RANK_CSP, PT_RANK_PARKS, PT_RANK_PEAK, PT_RANK_COUNT };

/* Puts the best KEEP of ROWS[0..N) (all when KEEP is 0) in order into OUT,
 * using ORDER (room for N pointers) as scratch; returns how many. With
 * IDLE_AFTER, idle housekeeping rows come after all the others. */
int rank_rows(struct pt_row *rows, int n, enum pt_rank_key key, bool idle_after, int keep, struct pt_row **order,
              struct pt_row *out);

/* Sorts ROWS[0..N) in place in the same order (a few shown rows). */
void rank_sort(struct pt_row *rows, int n, enum pt_rank_key key, bool idle_after);

/* Sorts the pointers ORDER[0..N) the same way (rows that must not move). */
void rank_order(const struct pt_row **order, int n, enum pt_rank_key key, bool idle_after);

/* The key's name as the live view's header shows it. */
const char *rank_key_name(enum pt_rank_key key);

#endif
