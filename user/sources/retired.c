#include "retired.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *grow(void *v, int *cap, size_t size)
{
    int want = *cap ? 2 * *cap : 64;
    void *p = realloc(v, (size_t)want * size);
    if (!p) {
        fprintf(stderr, "parktrace: out of memory for recycled blockers\n");
        exit(1);
    }
    *cap = want;
    return p;
}

static void add_counters(struct pt_counters *into, const struct pt_counters *add)
{
    into->parks += add->parks;
    for (int i = 0; i < PT_END_COUNT; i++)
        into->ends[i] += add->ends[i];
    into->thread_ns += add->thread_ns;
    into->real_ns += add->real_ns;
    into->fast_parks += add->fast_parks;
    for (int i = 0; i < PT_HIST_SLOTS; i++)
        into->hist[i] += add->hist[i];
}

/* As rows grouped by class or site (metrics.md): the site's peak and
 * threads are its members' sums (upper bounds), its longest wait their
 * longest, its events the first and the last. */
static void add_extra(struct pt_window_extra *into, const struct pt_window_extra *add)
{
    into->peak_parked += add->peak_parked;
    if (add->max_park_ns > into->max_park_ns)
        into->max_park_ns = add->max_park_ns;
    into->threads += add->threads;
    if (add->first_event && (!into->first_event || add->first_event < into->first_event))
        into->first_event = add->first_event;
    if (add->last_event > into->last_event)
        into->last_event = add->last_event;
}

void retired_add(struct retired *r, const struct retired_member *m)
{
    int i;
    for (i = 0; i < r->n; i++) {
        const struct retired_site *s = &r->v[i];
        if (s->pid == m->pid && strcmp(s->kind, m->kind) == 0 && strcmp(s->cls, m->cls) == 0 &&
            strcmp(s->site, m->site) == 0)
            break;
    }
    if (i == r->n) {
        if (r->n == r->cap)
            r->v = grow(r->v, &r->cap, sizeof(*r->v));
        struct retired_site *s = &r->v[r->n++];
        memset(s, 0, sizeof(*s));
        s->pid = m->pid;
        s->kind = m->kind;
        snprintf(s->cls, sizeof(s->cls), "%s", m->cls);
        snprintf(s->site, sizeof(s->site), "%s", m->site);
    }
    struct retired_site *s = &r->v[i];
    uint64_t ns = m->final.thread_ns;
    if (!s->objects || ns > s->heaviest_ns) {
        s->heaviest_ns = ns;
        snprintf(s->comm, sizeof(s->comm), "%s", m->comm);
        snprintf(s->thread, sizeof(s->thread), "%s", m->thread);
        s->wait = m->wait;
        s->first_stack = m->first_stack;
    }
    s->idle = s->objects ? s->idle && m->idle : m->idle;
    add_counters(&s->cur, &m->final);
    add_counters(&s->prev, &m->prev);
    add_extra(&s->whole, &m->whole);
    add_extra(&s->win, &m->win);
    s->objects++;
    if (m->final.parks != m->prev.parks || m->final.thread_ns != m->prev.thread_ns)
        s->win_objects++;
    r->count++;
}

void retired_add_stack(struct retired *r, const char *root, const struct pt_stack *stack,
                       const struct pt_model_stack *who, uint64_t count, uint64_t ns, uint64_t own_count,
                       uint64_t own_ns)
{
    const char *leaf = who->leaf;
    int i;
    for (i = 0; i < r->nstacks; i++) {
        const struct pt_model_stack *e = &r->stacks[i];
        if (e->stack == stack && e->pid == who->pid && e->kind == who->kind && e->wait == who->wait &&
            strcmp(e->root, root) == 0 && strcmp(e->leaf, leaf) == 0)
            break;
    }
    if (i == r->nstacks) {
        if (r->nstacks == r->stacks_cap)
            r->stacks = grow(r->stacks, &r->stacks_cap, sizeof(*r->stacks));
        struct pt_model_stack *e = &r->stacks[r->nstacks++];
        memset(e, 0, sizeof(*e));
        snprintf(e->root, sizeof(e->root), "%s", root);
        e->stack = stack;
        /* The class string outlives its blocker: the site keeps a copy. */
        for (int j = 0; j < r->n && !e->leaf; j++)
            if (strcmp(r->v[j].cls, leaf) == 0)
                e->leaf = r->v[j].cls;
        if (!e->leaf)
            e->leaf = "[recycled]";
        /* The blocker's name went with its slot: pid, kind and role stay. */
        e->pid = who->pid;
        e->kind = who->kind;
        e->wait = who->wait;
        snprintf(e->id, sizeof(e->id), "[recycled]");
    }
    struct pt_model_stack *e = &r->stacks[i];
    e->count += count;
    e->ns += ns;
    e->own_count += own_count;
    e->own_ns += own_ns;
}

int retired_rows(const struct retired *r, bool interval, uint64_t from_t, uint64_t now, struct pt_row *rows,
                 uint64_t *waits, uint64_t *blockers)
{
    const struct pt_counters none = {0};
    int n = 0;
    for (int i = 0; i < r->n; i++) {
        const struct retired_site *s = &r->v[i];
        struct pt_row *row = &rows[n];
        memset(row, 0, sizeof(*row));
        struct pt_counters cur = s->cur, from = interval ? s->prev : none;
        cur.t = now;
        from.t = from_t;
        metrics_window(&from, &cur, interval ? &s->win : &s->whole, &row->fig);
        if (!row->fig.parks && !row->fig.thread_time_ns)
            continue;
        *waits += row->fig.parks;
        *blockers += interval ? s->win_objects : s->objects;
        row->kind = s->kind;
        row->pid = s->pid;
        row->comm = s->comm;
        row->cls = s->cls;
        row->wait = s->wait;
        row->first_thread = s->thread;
        row->first_stack = s->first_stack;
        row->top_frame = s->site;
        row->objects = interval ? s->win_objects : s->objects;
        if (!row->objects)
            row->objects = 1;
        row->idle = s->idle;
        row->src = UINT32_MAX;
        n++;
    }
    return n;
}

void retired_roll(struct retired *r)
{
    for (int i = 0; i < r->n; i++) {
        r->v[i].prev = r->v[i].cur;
        memset(&r->v[i].win, 0, sizeof(r->v[i].win));
        r->v[i].win_objects = 0;
    }
}

void retired_free(struct retired *r)
{
    free(r->v);
    free(r->stacks);
    memset(r, 0, sizeof(*r));
}
