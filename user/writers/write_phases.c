/* The text report's phase lines: one per phase so far, closed or open. */
#include <inttypes.h>

#include "sanitize.h"
#include "writer.h"

/* HH:MM:SS.mmm, local time. */
static void clock_text(struct timespec t, char *buf)
{
    struct tm tm;
    localtime_r(&t.tv_sec, &tm);
    snprintf(buf, 32, "%02d:%02d:%02d.%03d", tm.tm_hour % 24, tm.tm_min % 60, tm.tm_sec % 61,
             (int)(t.tv_nsec / 1000000) % 1000);
}

int write_phases(FILE *f, const struct pt_model *m, const struct pt_write_opts *o)
{
    (void)o;
    for (int i = 0; i < m->nphases; i++) {
        const struct pt_model_phase *p = &m->phases[i];
        char start[32], end[32];
        clock_text(p->start, start);
        clock_text(p->end, end);
        fputs("phase: ", f);
        sanitize_fputs(f, writer_simple_class(p->cls), 0, 0);
        /* The lock named as its row names it. */
        if (p->name) {
            fputc(' ', f);
            sanitize_fputs(f, p->name, 0, 0);
        } else {
            fprintf(f, " 0x%" PRIx64, p->id);
        }
        fprintf(f, " (pid %d) from %s to %s, peak CSP %.2f, mean %.2f\n", p->pid, start, p->open ? "now" : end,
                p->peak, p->mean);
    }
    return writer_flush(f);
}
