/* --listen's pages rendered from one model into the snapshot: /metrics,
 * /debug/pprof/mutex (lock-role waits) and /debug/pprof/block (every
 * wait). */
#ifndef PT_FLEET_PAGES_H
#define PT_FLEET_PAGES_H
#include "fleet_snapshot.h"
#include "model.h"

/* Renders M (a model with its stacks) and SELF (parktrace's own figures,
 * for /metrics) and swaps the pages in; a page that could not be rendered
 * keeps its last version. Returns 0, or -1 when any could not. */
struct self_values;
int fleet_pages_render(struct fleet_snapshot *s, const struct pt_model *m, const struct self_values *self);

#endif
