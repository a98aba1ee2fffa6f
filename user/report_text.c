/* The human report: a header line, one row per blocker, then phases. */
#include <inttypes.h>
#include <string.h>

#include "duration.h"
#include "report.h"
#include "sanitize.h"

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

/* A Java class by its simple name; JSON has the full name. */
static const char *simple_class(const char *cls)
{
    const char *dot = strrchr(cls, '.');
    return dot && cls[0] != '<' ? dot + 1 : cls;
}

/* HH:MM:SS.mmm, local time. */
static void clock_text(struct timespec t, char *buf)
{
    struct tm tm;
    localtime_r(&t.tv_sec, &tm);
    snprintf(buf, 32, "%02d:%02d:%02d.%03d", tm.tm_hour % 24, tm.tm_min % 60, tm.tm_sec % 61,
             (int)(t.tv_nsec / 1000000) % 1000);
}

int report_text_write(FILE *f, const struct pt_report *r, bool live)
{
    char a[24], b[24], c[24], d[24], w[24];

    if (live)
        fputs("\033[H\033[J", f);   /* redraw in place */
    fprintf(f, "parktrace %s report: window %s, %" PRIu64 " blockers, %" PRIu64 " waits, "
               "dropped_events %" PRIu64 ", dropped_stacks %" PRIu64 ", truncated_stacks %" PRIu64 "/%" PRIu64 "\n",
            report_type_name(r->type), duration_format(r->window_ns, w, sizeof(w)), r->blockers,
            r->waits, r->dropped_events, r->dropped_stacks, r->truncated_stacks, r->stacks);
    if (!r->nrows) {
        fputs("  (no waits)\n", f);
        return report_flush(f);
    }
    fprintf(f, "%-8s %7s %-15s %-28s %-18s %4s %8s %5s %11s %10s %9s %9s %6s %7s %5s  %-36s %s\n", "KIND",
            "PID", "COMM", "CLASS", "ID", "ROLE", "PARKS", "PEAK", "THREAD-TIME", "REAL-TIME", "AVG-PARK",
            "AVG-HOLD", "REAL%", "THREAD%", "CSP", "TOP-FRAME", "CAUSED-BY");
    for (int i = 0; i < r->nrows; i++) {
        const struct pt_row *row = &r->rows[i];
        const struct pt_figures *g = &row->fig;
        char id[4 * 18 + 1], csp[16];
        if (row->name)
            snprintf(id, sizeof(id), "%s", row->name);
        else
            snprintf(id, sizeof(id), "0x%" PRIx64, row->id);
        /* A star marks a lock in a phase (an interval report). */
        if (row->has_csp)
            snprintf(csp, sizeof(csp), "%s%.2f", row->in_phase ? "*" : "", row->csp);
        else
            strcpy(csp, "-");
        fprintf(f, "%-8s %7d ", row->kind, row->pid);
        put_cell(f, row->comm, 15);
        fputc(' ', f);
        put_cell(f, simple_class(row->cls), 28);
        fputc(' ', f);
        put_cell(f, id, 18);
        fprintf(f, " %4s %8" PRIu64 " %5" PRIu64 " %11s %10s %9s %9s %6.1f %7.1f %5s  ",
                row->wait ? "wait" : "lock", g->parks, g->peak_parked, dur(g->thread_time_ns, a),
                dur(g->real_time_ns, b), dur(g->avg_park_ns, c), dur(g->avg_hold_ns, d),
                g->real_util * 100, g->thread_util * 100, csp);
        put_cell(f, row->top_frame ? row->top_frame : "-", 36);
        fputc(' ', f);
        sanitize_fputs(f, row->waker_stack ? stacks_top_frame(row->waker_stack) : "-", 0, 0);
        fputc('\n', f);
    }
    for (int i = 0; i < r->nphases; i++) {
        const struct phase *p = &r->phases[i];
        char start[32], end[32];
        clock_text(p->start, start);
        clock_text(p->end, end);
        fputs("phase: ", f);
        sanitize_fputs(f, simple_class(p->cls), 0, 0);
        fprintf(f, " 0x%" PRIx64 " (pid %d) from %s to %s, peak CSP %.2f, mean %.2f\n", p->id, p->pid, start,
                p->open ? "now" : end, p->peak, phase_mean(p));
    }
    return report_flush(f);
}
