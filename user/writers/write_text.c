/* The text report: a header line, one row per blocker, then the wait
 * chains (write_chains.c) and the phase lines (write_phases.c). */
#include <inttypes.h>
#include <string.h>

#include "cgroup_label.h"
#include "duration.h"
#include "sanitize.h"
#include "writer.h"

static const char *dur(uint64_t ns, char *buf)
{
    return ns ? duration_format(ns, buf, 24) : "-";
}

/* A column WIDTH characters wide holding NAME, cut to fit, padded, and
 * safe to show (sanitize.h): names come from the processes traced. */
static void put_cell(FILE *f, const char *name, int width)
{
    char buf[4 * 64 + 1];   /* up to 64 characters of up to 4 bytes */
    size_t n = sanitize_copy(buf, sizeof(buf), name, (size_t)width);
    fprintf(f, "%s%*s", buf, width - (int)n, "");
}

#define CGROUP_WIDTH 24

static void put_row(FILE *f, const struct pt_row *row, bool cgroups)
{
    const struct pt_figures *g = &row->fig;
    char a[24], b[24], c[24], d[24];
    char id[4 * 18 + 1], csp[16];
    if (row->objects > 1)
        snprintf(id, sizeof(id), "%" PRIu32 " objects", row->objects);
    else if (row->name)
        snprintf(id, sizeof(id), "%s", writer_short_frame(row->name));
    else
        snprintf(id, sizeof(id), "0x%" PRIx64, row->id);
    /* A star marks a lock in a phase (an interval report). */
    if (row->has_csp)
        snprintf(csp, sizeof(csp), "%s%.2f", row->in_phase ? "*" : "", row->csp);
    else
        strcpy(csp, "-");
    if (row->pid < 0)
        fprintf(f, "%-11s %7s ", row->kind, "-");
    else
        fprintf(f, "%-11s %7d ", row->kind, row->pid);
    put_cell(f, row->comm, 15);
    fputc(' ', f);
    if (cgroups) {
        char cg[CGROUP_WIDTH * 4 + 1];
        cgroup_label(row, CGROUP_WIDTH, cg, sizeof(cg));
        put_cell(f, cg, CGROUP_WIDTH);
        fputc(' ', f);
    }
    put_cell(f, writer_simple_class(row->cls), 28);
    fputc(' ', f);
    put_cell(f, id, 18);
    fprintf(f, " %4s %8" PRIu64 " %5" PRIu64 " %11s %10s %9s %9s %6.1f %7.1f %5s  ", row->wait ? "wait" : "lock",
            g->parks, g->peak_parked, dur(g->thread_time_ns, a), dur(g->real_time_ns, b), dur(g->avg_park_ns, c),
            dur(g->avg_hold_ns, d), g->real_util * 100, g->thread_util * 100, csp);
    put_cell(f, row->top_frame ? writer_short_frame(row->top_frame) : "-", 36);
    fputc(' ', f);
    sanitize_fputs(f, row->waker_stack ? writer_short_frame(row->waker_top_frame) : "-", 0, 0);
    fputc('\n', f);
}

int write_text(FILE *f, const struct pt_model *m, const struct pt_write_opts *o)
{
    const struct pt_totals *t = &m->totals;
    char w[24];

    fprintf(f, "parktrace %s report: window %s, %" PRIu64 " blockers, %" PRIu64 " waits, "
               "dropped_events %" PRIu64 ", dropped_stacks %" PRIu64 ", truncated_stacks %" PRIu64 "/%" PRIu64 "\n",
            model_type_name(m->type), duration_format(m->window_ns, w, sizeof(w)), t->blockers, t->waits,
            t->dropped_events, t->dropped_stacks, t->truncated_stacks, t->stacks);
    /* Past 0.1% of the waits, the figures are short and the header says so. */
    uint64_t dropped = t->dropped_events + t->dropped_stacks;
    if (dropped && dropped * 1000 > t->waits)
        fprintf(f, "  WARNING: %" PRIu64 " events or stacks dropped, %.1f%% of the waits: the figures below are short"
                   " (--self-stats says which; --max-blockers enlarges the blocker table)\n",
                dropped, t->waits ? 100.0 * (double)dropped / (double)t->waits : 100.0);
    /* Stacks taken at random once their budget was spent: say how much of
     * the stack time rests on them. */
    if (t->stack_samples || t->stack_samples_lost) {
        fprintf(f, "  stacks: over the %g%% stack budget, %" PRIu64 " waits charged to stacks taken at random", t->stack_budget * 100,
                t->stack_samples);
        if (t->stack_time_ns)
            fprintf(f, " (%.1f%% of the stack time)", model_stack_sampled_pct(t));
        fprintf(f, ", %" PRIu64 " left to the others' weights (--stacks all takes every stack)\n", t->stack_samples_lost);
    }
    if (!m->nrows) {
        fputs("  (no waits)\n", f);
        return writer_flush(f);
    }
    bool cgroups = cgroup_label_wanted(m);
    fprintf(f, "%-11s %7s %-15s ", "KIND", "PID", "COMM");
    if (cgroups)
        fprintf(f, "%-*s ", CGROUP_WIDTH, "CGROUP");
    fprintf(f, "%-28s %-18s %4s %8s %5s %11s %10s %9s %9s %6s %7s %5s  %-36s %s\n", "CLASS", "ID", "ROLE", "PARKS", "PEAK", "THREAD-TIME", "REAL-TIME", "AVG-PARK",
            "AVG-HOLD", "REAL%", "THREAD%", "CSP", "TOP-FRAME", "CAUSED-BY");
    for (int i = 0; i < m->nrows; i++) {
        if (m->idle_last && m->rows[i].idle && (i == 0 || !m->rows[i - 1].idle))
            fputs("-- idle housekeeping: service threads and pool workers waiting for work"
                  " (--show-idle ranks them in place) --\n", f);
        put_row(f, &m->rows[i], cgroups);
    }
    /* What --top (or --print-threshold) left out, so that the rows add up. */
    if (t->rest.rows) {
        char d[32];
        fprintf(f, "-- and %" PRIu64 " more rows (%" PRIu64 " blockers): %" PRIu64 " waits, %s of thread time"
                   " (--top 0 shows them) --\n",
                t->rest.rows, t->rest.objects, t->rest.parks,
                duration_format(t->rest.thread_time_ns, d, sizeof(d)));
    }
    write_chains_text(f, m);
    return write_phases(f, m, o);
}
