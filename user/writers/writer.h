/* The writers: each renders a model (model.h) to a stream, in one file
 * with one entry point of this shape, and reads nothing else: no kernel
 * map, no collector, no service. A new output format is one new file.
 *
 *   write_text.c       the text report: header, rows, then the phase lines
 *   write_live.c       the live view on a terminal (-i): fitted to it, redrawn in place
 *   write_phases.c     the phase lines of the text report
 *   write_chains.c     the wait chains, text and JSON
 *   write_json.c       one JSON Lines object (docs/contract/cli.md)
 *   write_collapsed.c  collapsed stacks for flamegraph.pl (--collapsed)
 *   write_pprof.c      a gzip-compressed pprof contention profile (--pprof, the /debug/pprof endpoints)
 *   write_metrics.c    Prometheus text exposition (--listen's /metrics)
 *
 * Each returns 0 (write_collapsed: the number of lines), or -1 when F did
 * not take the output, with errno saying why. A report leaves in one write:
 * each writer ends with a flush. */
#ifndef PT_WRITER_H
#define PT_WRITER_H
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "model.h"

struct self_values;

struct pt_write_opts {
    bool count_value;   /* collapsed: number of waits, not microseconds (--collapsed-value count) */
    bool waker;         /* collapsed: waiter and waker stacks (--waker) */
    bool locks_only;    /* pprof: lock-role waits only (/debug/pprof/mutex) */
    bool since_start;   /* pprof: the stacks of a model that is not the final one, cumulative since start */
    double self_cpu_s;  /* metrics: parktrace's own CPU time */
    uint64_t self_rss;  /* metrics: and resident memory */
    const struct self_values *self;   /* metrics: the --self-stats figures (self_counters.h), or NULL */
};

int write_text(FILE *f, const struct pt_model *m, const struct pt_write_opts *o);
/* The live view (live_view.h) takes M's rows, unless paused, and draws
 * them; with M NULL it draws the rows it holds again (a key, a resize). */
struct live_view;
int write_live(FILE *f, const struct pt_model *m, struct live_view *v);
int write_phases(FILE *f, const struct pt_model *m, const struct pt_write_opts *o);
/* write_chains.c: the wait chains after the text rows; JSON's "chains". */
void write_chains_text(FILE *f, const struct pt_model *m);
void write_chains_json(FILE *f, const struct pt_model *m);
/* One chain's line, as the text report prints it (names made safe). */
void write_chain_line(FILE *f, const struct pt_model_chain *ch);
int write_json(FILE *f, const struct pt_model *m, const struct pt_write_opts *o);
int write_collapsed(FILE *f, const struct pt_model *m, const struct pt_write_opts *o);
int write_pprof(FILE *f, const struct pt_model *m, const struct pt_write_opts *o);
int write_metrics(FILE *f, const struct pt_model *m, const struct pt_write_opts *o);

/* Flushes F: 0, or -1 when this or an earlier write to F failed (ferror: a
 * write that failed while the buffer filled up). */
static inline int writer_flush(FILE *f)
{
    return fflush(f) || ferror(f) ? -1 : 0;
}

/* A Java class by its simple name, for the text outputs (JSON has the
 * full name); names in angle brackets stay whole. */
static inline const char *writer_simple_class(const char *cls)
{
    const char *dot = strrchr(cls, '.');
    return dot && cls[0] != '<' ? dot + 1 : cls;
}

/* A frame as the text outputs show it: a Go function without its import
 * path's directories ("storage.(*mergeGenericQuerier).Select" for
 * github.com/prometheus/prometheus/storage...), which would fill the
 * column; JSON, pprof and the collapsed stacks keep it whole. Other
 * frames have no slash before their name ends, or are [module+0x...]. */
static inline const char *writer_short_frame(const char *frame)
{
    if (!frame || frame[0] == '[' || frame[0] == '/')
        return frame;
    size_t name = strcspn(frame, "([ ");
    const char *cut = frame;
    for (size_t i = 0; i < name; i++)
        if (frame[i] == '/')
            cut = frame + i + 1;
    return cut;
}

#endif
