/* CSP's figures in a report: each process's working thread time in the
 * window (alive, less idle sleeps and wait-role waits), each lock row's
 * share of it, phases fed, and the processes list. */
#include "collect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect_parts.h"

void pid_sum_add(struct pid_sums *l, int pid, uint64_t ns)
{
    if (l->last < l->n && l->v[l->last].pid == pid) {
        l->v[l->last].ns += ns;
        return;
    }
    for (int i = 0; i < l->n; i++)
        if (l->v[i].pid == pid) {
            l->v[i].ns += ns;
            l->last = i;
            return;
        }
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = collector_realloc(l->v, (size_t)l->cap * sizeof(*l->v));
    }
    l->last = l->n;
    l->v[l->n].pid = pid;
    l->v[l->n++].ns = ns;
}

static uint64_t pid_sum_of(const struct pid_sums *l, int pid)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].pid == pid)
            return l->v[i].ns;
    return 0;
}

/* PID's thread time alive, and the idle part of it (metrics.md, CSP: its
 * idle sleeps, measured by the kernel, and its wait-role waits), in the
 * window or over the run; false when PID is not watched. */
static bool process_time(struct collector *c, const struct pid_sums *idle, int pid, uint64_t now, bool interval,
                         uint64_t *alive, uint64_t *idle_ns)
{
    uint64_t sleep;
    if (!(interval ? csp_alive_window(&c->csp, pid, now, alive, &sleep) : csp_alive(&c->csp, pid, now, alive, &sleep)))
        return false;
    uint64_t all = sleep + pid_sum_of(idle, pid);
    *idle_ns = all < *alive ? all : *alive;
    return true;
}

/* CSP for every lock-role row; in interval reports, phases too. */
void apply_csp(struct collector *c, struct pt_model *r, const struct pid_sums *idle, uint64_t now,
                      bool interval)
{
    struct timespec win = interval ? c->window_wall : c->start_wall;
    for (int i = 0; i < r->nrows; i++) {
        struct pt_row *row = &r->rows[i];
        uint64_t alive, idle_ns;
        /* A goroutine's waits are not its threads': no thread time to share. */
        if (row->wait || row_of_goroutines(row) ||
            !process_time(c, idle, row->pid, now, interval, &alive, &idle_ns))
            continue;
        row->has_csp = csp_value(row->fig.thread_time_ns, alive, idle_ns, &row->csp);
        if (!interval || !row->has_csp || row->src == UINT32_MAX)
            continue;
        struct blocker *b = collector_record(c, row->src);
        collector_feed_phase(c, b, row, win);
        b->phase_seen = true;
    }
    /* No lock in a phase: the rows say so already (cleared), and no
     * blocker's record need be looked at, 10 000 cache misses a second. */
    if (!interval || !c->phases.open)
        return;
    /* A lock in a phase that saw no waits this interval has CSP 0: it ends.
     * A record fed above without a phase keeps phase_seen set: harmless,
     * as a phase only opens as its lock is fed (and then seen). */
    uint32_t nused = tracer_used_slots(c->t);
    for (uint32_t i = 0; i < nused; i++) {
        struct blocker *b = c->b[i];
        if (!b)
            continue;
        if (b->phase && !b->phase_seen)
            collector_feed_phase(c, b, NULL, win);
        b->phase_seen = false;
    }
    for (int i = 0; i < r->nrows; i++)
        r->rows[i].in_phase = r->rows[i].src != UINT32_MAX && collector_record(c, r->rows[i].src)->phase != 0;
}

/* R's processes with a known alive time: their working and idle thread
 * time in the window (JSON `processes`). */
void model_processes(struct collector *c, struct pt_model *r, const struct pid_sums *idle,
                            const struct pid_sums *waited, uint64_t now, bool interval)
{
    for (int i = 0; i < r->nrows; i++) {
        int pid = r->rows[i].pid, j;
        for (j = 0; j < r->nprocs && r->procs[j].pid != pid; j++)
            ;
        uint64_t alive, idle_ns;
        if (j < r->nprocs || !process_time(c, idle, pid, now, interval, &alive, &idle_ns))
            continue;
        struct pt_model_process *p = model_add_process(r);
        p->pid = pid;
        snprintf(p->comm, sizeof(p->comm), "%s", r->rows[i].comm);
        p->cgroup = r->rows[i].cgroup;
        p->container = r->rows[i].container;
        p->ns_pid = r->rows[i].ns_pid;
        p->idle_ns = idle_ns;
        p->working_ns = alive - idle_ns;
        p->lived_ns = alive;
        p->thread_time_ns = pid_sum_of(waited, pid);
    }
}
