#include "group.h"

#include <string.h>

#include "metrics.h"

static const char *group_key(const struct pt_row *row, enum pt_group by)
{
    return by == PT_BY_CLASS ? row->cls : row->top_frame ? row->top_frame : "[unknown]";
}

static bool same_group(const struct pt_row *a, const struct pt_row *b, enum pt_group by)
{
    return a->pid == b->pid && strcmp(a->kind, b->kind) == 0 &&
           strcmp(group_key(a, by), group_key(b, by)) == 0;
}

void group_rows(struct pt_model *r, enum pt_group by)
{
    if (by == PT_BY_OBJECT)
        return;
    int n = 0;
    for (int i = 0; i < r->nrows; i++) {
        struct pt_row *row = &r->rows[i];
        int g;
        for (g = 0; g < n && !same_group(&r->rows[g], row, by); g++)
            ;
        if (g == n) {
            r->rows[n++] = *row;
            continue;
        }
        struct pt_row *into = &r->rows[g];
        /* One process: the members' shares of its working time add up. */
        bool has_csp = into->has_csp || row->has_csp, in_phase = into->in_phase || row->in_phase;
        double csp = (into->has_csp ? into->csp : 0) + (row->has_csp ? row->csp : 0);
        /* Compared before a heavier member takes over the group's identity. */
        bool mixed = strcmp(into->cls, row->cls) != 0;
        /* The group shows its heaviest member's identity and stacks. */
        if (row->fig.thread_time_ns > into->fig.thread_time_ns) {
            struct pt_figures sum = into->fig;
            const char *name = into->name;
            *into = *row;
            into->fig = sum;
            into->name = name;
        }
        if (!into->name || !row->name || strcmp(into->name, row->name) != 0)
            into->name = NULL;
        if (mixed && by == PT_BY_SITE)
            into->cls = "(several)";
        metrics_merge(&into->fig, &row->fig);
        into->has_csp = has_csp;
        into->csp = csp;
        into->in_phase = in_phase;
    }
    r->nrows = n;
}
