#include "cgroup_label.h"

#include <stdio.h>
#include <string.h>

bool cgroup_label_wanted(const struct pt_model *m)
{
    for (int i = 1; i < m->nrows; i++)
        if (m->rows[i].cgroup != m->rows[0].cgroup)   /* kept once for the run: compared by address */
            return true;
    return m->nrows && m->rows[0].pid < 0;           /* --by cgroup */
}

void cgroup_label(const struct pt_row *row, int width, char *buf, size_t len)
{
    if (row->container) {
        snprintf(buf, len, "%.12s", row->container);
        return;
    }
    if (!row->cgroup) {
        snprintf(buf, len, "-");
        return;
    }
    /* A path's end names the unit or container; its start is the slice. */
    size_t n = strlen(row->cgroup);
    if (width < 2 || n <= (size_t)width)
        snprintf(buf, len, "%s", row->cgroup);
    else
        snprintf(buf, len, "~%s", row->cgroup + n - (size_t)(width - 1));
}
