#include "collect.h"

#include <bpf/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "procmaps.h"
#include "symbolize.h"

#define MAX_RESOLVE_TRIES 20

uint64_t collect_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void collector_init(struct collector *c, struct tracer *t, const struct pt_options *o)
{
    memset(c, 0, sizeof(*c));
    c->t = t;
    c->o = o;
    c->b = calloc(t->nslots, sizeof(*c->b));
    c->inprog_ns = calloc(t->nslots, sizeof(*c->inprog_ns));
    c->start_ns = c->window_start = collect_now_ns();
}

static bool slot_valid(const struct pt_slot *s)
{
    return __atomic_load_n(&s->valid, __ATOMIC_ACQUIRE) != 0;
}

/* Names a blocker: process, global variable, first stack, class and role.
 * Retried while the first stack has not been unwound yet. */
static void resolve(struct collector *c, uint32_t idx)
{
    struct blocker *b = &c->b[idx];
    const struct pt_slot *s = &c->t->slots[idx];

    if (b->resolved)
        return;
    if (!b->tries) {
        b->pid = s->key.kind & PT_KEY_SHARED ? (int)s->first_tgid : (int)s->key.owner;
        struct pm_proc *p = procmaps_get(b->pid);
        memcpy(b->thread, s->first_comm, PT_COMM_LEN);
        snprintf(b->comm, sizeof(b->comm), "%s", p->comm[0] ? p->comm : b->thread);
        b->name = symbolize_data((int)s->first_tgid, s->first_uaddr);
    }
    b->tries++;
    b->first_stack = stacks_resolve(idx, (int)s->first_tgid, s->first_stack);
    classify_futex(b->first_stack, &b->cls);
    classify_override(c->o, b->cls.cls, &b->cls.wait);
    b->resolved = b->first_stack->unwound || b->tries >= MAX_RESOLVE_TRIES;
}

struct blocker *collector_blocker(struct collector *c, uint32_t idx)
{
    if (idx >= tracer_used_slots(c->t) || !slot_valid(&c->t->slots[idx]))
        return NULL;
    resolve(c, idx);
    return &c->b[idx];
}

void collector_tick(struct collector *c)
{
    stacks_poll_samples();
    uint32_t n = tracer_used_slots(c->t);
    for (uint32_t i = 0; i < n; i++)
        if (slot_valid(&c->t->slots[i]) && !c->b[i].resolved)
            resolve(c, i);
}

struct waiter {
    uint32_t slot, tid;
};

/* Sums, per slot, the part of each wait still in progress at NOW. */
static struct waiter *read_waiting(struct collector *c, uint64_t now, int *nwaiters)
{
    uint32_t key, next;
    struct pt_wait w;
    bool first = true;
    int cap = 0, n = 0;
    struct waiter *ws = NULL;

    memset(c->inprog_ns, 0, c->t->nslots * sizeof(*c->inprog_ns));
    while (!bpf_map_get_next_key(c->t->waiting_fd, first ? NULL : &key, &next)) {
        first = false;
        key = next;
        if (bpf_map_lookup_elem(c->t->waiting_fd, &key, &w) || !(w.flags & PT_WAIT_TIMED) ||
            w.slot >= c->t->nslots)
            continue;
        if (w.start_ns < now)
            c->inprog_ns[w.slot] += now - w.start_ns;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            ws = realloc(ws, (size_t)cap * sizeof(*ws));
        }
        ws[n++] = (struct waiter){w.slot, key};
    }
    *nwaiters = n;
    return ws;
}

static void snapshot(const struct pt_slot *s, uint64_t now, uint64_t inprog, struct pt_counters *out)
{
    out->t = now;
    out->parks = s->parks;
    memcpy(out->ends, s->ends, sizeof(out->ends));
    out->thread_ns = s->thread_ns + inprog;
    out->parked_now = s->parked_now;
    uint64_t busy = s->busy_start;
    out->real_ns = s->real_ns + (out->parked_now > 0 && busy && busy < now ? now - busy : 0);
    memcpy(out->hist, s->hist, sizeof(out->hist));
}

/* Starts a new window: resets the kernel's per-window fields, then counts
 * the threads still waiting as waiters of the new window. */
static void roll_window(struct collector *c, uint32_t nused, const struct waiter *ws, int nws)
{
    for (uint32_t i = 0; i < nused; i++) {
        struct pt_slot *s = &c->t->slots[i];
        if (!slot_valid(s))
            continue;
        int64_t now_parked = __atomic_load_n(&s->parked_now, __ATOMIC_RELAXED);
        __atomic_store_n(&s->peak_win, now_parked > 0 ? (uint64_t)now_parked : 0, __ATOMIC_RELAXED);
        __atomic_store_n(&s->max_win_ns, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&s->threads_win, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&s->win_first_ts, 0, __ATOMIC_RELAXED);
    }
    tracer_bump_window_gen(c->t);
    uint32_t gen = tracer_window_gen(c->t);
    for (int i = 0; i < nws; i++) {
        struct pt_thread_key tk = {.slot = ws[i].slot, .tid = ws[i].tid};
        uint32_t seen;
        if (!bpf_map_lookup_elem(c->t->thread_seen_fd, &tk, &seen) && seen != gen &&
            !bpf_map_update_elem(c->t->thread_seen_fd, &tk, &gen, BPF_EXIST))
            __atomic_add_fetch(&c->t->slots[ws[i].slot].threads_win, 1, __ATOMIC_RELAXED);
    }
}

static int row_cmp(const void *a, const void *b)
{
    const struct pt_row *x = a, *y = b;
    if (x->fig.thread_time_ns != y->fig.thread_time_ns)
        return x->fig.thread_time_ns > y->fig.thread_time_ns ? -1 : 1;
    return x->fig.parks > y->fig.parks ? -1 : x->fig.parks < y->fig.parks;
}

void collector_report(struct collector *c, enum pt_report_type type, struct pt_report *r)
{
    uint64_t now = collect_now_ns();
    int nws;
    bool interval = type == PT_REPORT_INTERVAL;

    collector_tick(c);
    memset(r, 0, sizeof(*r));
    r->type = type;
    clock_gettime(CLOCK_REALTIME, &r->wall);
    struct waiter *ws = read_waiting(c, now, &nws);
    uint32_t nused = tracer_used_slots(c->t);
    r->rows = calloc(nused ? nused : 1, sizeof(*r->rows));
    r->window_ns = now - (interval ? c->window_start : c->start_ns);

    for (uint32_t i = 0; i < nused; i++) {
        const struct pt_slot *s = &c->t->slots[i];
        if (!slot_valid(s))
            continue;
        struct blocker *b = &c->b[i];
        struct pt_counters cur, zero = {.t = c->start_ns};
        snapshot(s, now, c->inprog_ns[i], &cur);
        struct pt_window_extra extra;
        if (interval)
            extra = (struct pt_window_extra){s->peak_win, s->max_win_ns, s->threads_win,
                                             s->win_first_ts, s->last_ts};
        else
            extra = (struct pt_window_extra){s->peak, s->max_ns, s->threads, s->first_ts, s->last_ts};
        struct pt_row *row = &r->rows[r->nrows];
        /* A blocker's counters start at zero, so a new one's window starts
         * from zero at the window's start. */
        b->prev.t = c->window_start;
        metrics_window(interval ? &b->prev : &zero, &cur, &extra, &row->fig);
        if (interval)
            b->prev = cur;
        if (!row->fig.parks && !row->fig.thread_time_ns && !row->fig.parked_now)
            continue;
        r->waits += row->fig.parks;
        r->blockers++;
        if (s->parks < c->o->print_threshold)
            continue;
        resolve(c, i);
        row->kind = pt_kind_names[s->key.kind & 0xff];
        row->pid = b->pid;
        row->comm = b->comm;
        row->id = s->first_uaddr;
        row->name = b->name;
        row->cls = b->cls.cls;
        row->wait = b->cls.wait;
        row->first_thread = b->thread;
        row->first_stack = b->first_stack;
        row->top_frame = stacks_top_frame(b->first_stack);
        r->nrows++;
    }
    if (interval) {
        roll_window(c, nused, ws, nws);
        c->window_start = now;
    }
    free(ws);

    qsort(r->rows, (size_t)r->nrows, sizeof(*r->rows), row_cmp);
    if (c->o->top && r->nrows > c->o->top)
        r->nrows = c->o->top;
    for (int i = 0; i < PT_DROP_COUNT; i++)
        r->drops[i] = tracer_drop(c->t, i);
    r->dropped_events = r->drops[PT_DROP_BLOCKERS] + r->drops[PT_DROP_WAITING] +
                        r->drops[PT_DROP_THREADS] + r->drops[PT_DROP_STACKAGG];
    r->dropped_stacks = r->drops[PT_DROP_STACKS] + r->drops[PT_DROP_SAMPLES];
}

void report_free(struct pt_report *r)
{
    free(r->rows);
    r->rows = NULL;
}

void collector_free(struct collector *c)
{
    for (uint32_t i = 0; i < c->t->nslots; i++)
        free(c->b[i].name);
    free(c->b);
    free(c->inprog_ns);
}
