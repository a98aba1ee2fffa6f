/* The cgroup column of the text and live views: shown when a report's rows
 * come from more than one cgroup (or are grouped by cgroup). */
#ifndef PT_CGROUP_LABEL_H
#define PT_CGROUP_LABEL_H
#include <stdbool.h>
#include <stddef.h>
#include "model.h"

/* Whether M's rows are in more than one cgroup. */
bool cgroup_label_wanted(const struct pt_model *m);

/* ROW's cgroup in at most WIDTH characters: its container's short id (the
 * 12 hex digits `docker ps` shows), else its path, whose end is kept when
 * it is longer ("~" marks the cut); "-" when unknown. Not yet safe to show
 * (sanitize.h): the path is the machine's. */
void cgroup_label(const struct pt_row *row, int width, char *buf, size_t len);

#endif
