/* The JSON Lines report of docs/contract/cli.md: one object per report. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "json.h"
#include "writer.h"

static void write_u64(FILE *f, const char *key, uint64_t v)
{
    fprintf(f, ",\"%s\":%" PRIu64, key, v);
}

static void write_f(FILE *f, const char *key, double v)
{
    fprintf(f, ",\"%s\":", key);
    json_number(f, v);
}

static void write_frames(FILE *f, const struct pt_stack *st)
{
    fputc('[', f);
    for (int i = 0; st && i < st->n; i++) {
        if (i)
            fputc(',', f);
        json_string(f, st->frames[i].name);
    }
    fputc(']', f);
}

/* A process's pid (null for a row of several, --by cgroup), and where it
 * lives: cgroup, container, and its own pid when in another pid namespace. */
static void write_process(FILE *f, int pid, const char *comm, const char *cgroup, const char *container, int ns_pid)
{
    if (pid < 0)
        fputs("\"pid\":null", f);
    else
        fprintf(f, "\"pid\":%d", pid);
    if (ns_pid)
        fprintf(f, ",\"ns_pid\":%d", ns_pid);
    fputs(",\"comm\":", f);
    json_string(f, comm);
    fputs(",\"cgroup\":", f);
    json_string(f, cgroup);
    fputs(",\"container\":", f);
    json_string(f, container);
}

static void write_row(FILE *f, const struct pt_row *row, bool sees_fast_parks)
{
    const struct pt_figures *g = &row->fig;
    fputs("{\"kind\":", f);
    json_string(f, row->kind);
    fputc(',', f);
    write_process(f, row->pid, row->comm, row->cgroup, row->container, row->ns_pid);
    fprintf(f, ",\"id\":\"0x%" PRIx64 "\",\"name\":", row->id);
    json_string(f, row->name);
    fputs(",\"class\":", f);
    json_string(f, row->cls);
    fprintf(f, ",\"role\":\"%s\"", row->wait ? "wait" : "lock");
    write_u64(f, "parks", g->parks);
    write_u64(f, "wakeups", g->wakeups);
    write_u64(f, "timeouts", g->timeouts);
    /* An extension of the contract; null where the probes cannot see them. */
    if (sees_fast_parks && strcmp(row->kind, "jvm-park") == 0)
        write_u64(f, "fast_parks", g->fast_parks);
    else
        fputs(",\"fast_parks\":null", f);
    write_u64(f, "parked_now", g->parked_now);
    write_u64(f, "peak_parked", g->peak_parked);
    write_u64(f, "thread_time_ns", g->thread_time_ns);
    write_u64(f, "real_time_ns", g->real_time_ns);
    write_u64(f, "avg_park_ns", g->avg_park_ns);
    write_u64(f, "max_park_ns", g->max_park_ns);
    write_u64(f, "avg_hold_ns", g->avg_hold_ns);
    write_f(f, "real_util", g->real_util);
    write_f(f, "thread_util", g->thread_util);
    write_f(f, "real_life_util", g->real_life_util);
    write_f(f, "thread_life_util", g->thread_life_util);
    write_u64(f, "threads", g->threads);
    write_u64(f, "objects", row->objects ? row->objects : 1);
    /* An extension of the contract: idle housekeeping (metrics.md, "The default view"). */
    fprintf(f, ",\"idle\":%s", row->idle ? "true" : "false");
    write_f(f, "csp", row->has_csp ? row->csp : NAN);
    fputs(",\"hist_ns\":[", f);
    bool first = true;
    for (int i = 0; i < PT_FIG_HIST_SLOTS; i++) {
        if (!g->hist[i])
            continue;
        uint64_t lo, hi;
        metrics_hist_bounds(i, &lo, &hi);
        fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", first ? "" : ",", lo, hi, g->hist[i]);
        first = false;
    }
    fputs("],\"first_thread\":", f);
    json_string(f, row->first_thread);
    fputs(",\"first_stack\":", f);
    write_frames(f, row->first_stack);
    fputs(",\"top_frame\":", f);
    json_string(f, row->top_frame);
    /* An extension of the contract: who caused the waits. */
    fputs(",\"top_waker\":", f);
    if (row->waker_stack) {
        fputs("{\"comm\":", f);
        json_string(f, row->waker_comm);
        write_u64(f, "wakeups", row->waker_wakeups);
        write_u64(f, "time_ns", row->waker_ns);
        fputs(",\"top_frame\":", f);
        json_string(f, row->waker_top_frame);
        fputs(",\"stack\":", f);
        write_frames(f, row->waker_stack);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputc('}', f);
}

/* An RFC 3339 time in UTC, with milliseconds, quoted. */
static void write_time(FILE *f, struct timespec t)
{
    char when[64];
    struct tm tm;
    gmtime_r(&t.tv_sec, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(f, "\"%s.%03ldZ\"", when, t.tv_nsec / 1000000);
}

int write_json(FILE *f, const struct pt_model *m, const struct pt_write_opts *o)
{
    const struct pt_totals *t = &m->totals;
    (void)o;
    fprintf(f, "{\"type\":\"%s\",\"time\":", model_type_name(m->type));
    write_time(f, m->wall);
    fprintf(f, ",\"window_ns\":%" PRIu64, m->window_ns);
    fprintf(f, ",\"totals\":{\"waits\":%" PRIu64 ",\"blockers\":%" PRIu64 ",\"dropped_events\":%" PRIu64
               ",\"dropped_stacks\":%" PRIu64 ",\"stacks\":%" PRIu64 ",\"truncated_stacks\":%" PRIu64
               ",\"live_blockers\":%" PRIu64 ",\"recycled_blockers\":%" PRIu64,
            t->waits, t->blockers, t->dropped_events, t->dropped_stacks, t->stacks, t->truncated_stacks,
            t->live_blockers, t->recycled_blockers);
    /* The rows shown and the rest add up to these (metrics.md). */
    fprintf(f, ",\"thread_time_ns\":%" PRIu64 ",\"rest\":{\"rows\":%" PRIu64 ",\"objects\":%" PRIu64
               ",\"parks\":%" PRIu64 ",\"thread_time_ns\":%" PRIu64 "}",
            t->thread_time_ns, t->rest.rows, t->rest.objects, t->rest.parks, t->rest.thread_time_ns);
    /* A long run's oldest closed phases, let go (only when some were). */
    if (t->phases_forgotten)
        fprintf(f, ",\"phases_forgotten\":%" PRIu64, t->phases_forgotten);
    fprintf(f, ",\"stacks_mode\":\"%s\"", t->stack_budget > 0 ? "sampled" : "all");
    if (t->stack_budget > 0)
        fprintf(f, ",\"stack_budget_pct\":%g,\"stack_samples\":%" PRIu64 ",\"stack_samples_effective\":%.1f"
                   ",\"stack_samples_lost\":%" PRIu64,
                t->stack_budget * 100, t->stack_samples, model_stack_samples_effective(t), t->stack_samples_lost);
    if (t->chains_unread)
        fprintf(f, ",\"chains_unread\":%" PRIu64, t->chains_unread);
    if (t->stack_time_ns)
        fprintf(f, ",\"stack_time_sampled_pct\":%.2f,\"stack_time_unsampled_pct\":%.2f",
                model_stack_sampled_pct(t),
                100.0 * (double)t->stack_unsampled_ns / (double)t->stack_time_ns);
    fputc('}', f);
    fputs(",\"blockers\":[", f);
    for (int i = 0; i < m->nrows; i++) {
        if (i)
            fputc(',', f);
        write_row(f, &m->rows[i], m->sees_fast_parks);
    }
    fputs("],\"phases\":[", f);
    for (int i = 0; i < m->nphases; i++) {
        const struct pt_model_phase *p = &m->phases[i];
        fprintf(f, "%s{\"pid\":%d,\"id\":\"0x%" PRIx64 "\",\"class\":", i ? "," : "", p->pid, p->id);
        json_string(f, p->cls);
        fputs(",\"start\":", f);
        write_time(f, p->start);
        fputs(",\"end\":", f);
        if (p->open)
            fputs("null", f);
        else
            write_time(f, p->end);
        fprintf(f, ",\"peak_csp\":%.4f,\"mean_csp\":%.4f}", p->peak, p->mean);
    }
    fputs("],\"processes\":[", f);
    for (int i = 0; i < m->nprocs; i++) {
        const struct pt_model_process *p = &m->procs[i];
        fputs(i ? ",{" : "{", f);
        write_process(f, p->pid, p->comm, p->cgroup, p->container, p->ns_pid);
        fprintf(f, ",\"working_ns\":%" PRIu64 ",\"idle_ns\":%" PRIu64 ",\"lived_ns\":%" PRIu64
                   ",\"thread_time_ns\":%" PRIu64 "}",
                p->working_ns, p->idle_ns, p->lived_ns, p->thread_time_ns);
    }
    fputc(']', f);
    write_chains_json(f, m);
    fputs("}\n", f);
    return writer_flush(f);
}
