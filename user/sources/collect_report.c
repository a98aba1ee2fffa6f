/* One report from the kernel's cumulative tables: each slot read, the
 * window's figures, CSP and phases, the processes' working time, the
 * rows a view shows (collector_report). */
#include "collect.h"

#include <stddef.h>
#include <stdio.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgroup_names.h"
#include "idle.h"
#include "jvm_tracker.h"
#include "monotonic.h"
#include "procmaps.h"
#include "services.h"
#include "slot_table.h"
#include "stack_maps.h"
#include "stacks.h"
#include "symbolize.h"
#include "view.h"
#include "wakers.h"
#include "collect_parts.h"
#include "oom.h"

/* Reads a slot's cumulative state at NOW, and the first HIST_SLOTS slots
 * of its histogram (the rest are left as they were). Waits in progress
 * count up to NOW: parked_now * now - start_sum. The kernel updates these
 * fields one atomic at a time, so the read is repeated until two passes
 * agree. A wait's end adds its time to thread_ns a few atomics before it
 * leaves parked_now and start_sum: two passes read within those few
 * nanoseconds agreed and counted it twice, once done and once in progress
 * (that window's real time above its thread time, the next window's
 * thread time short). So where a wait may be under way or ending (a
 * waiter, or an event in the last millisecond), the second pass waits a
 * microsecond, longer than the kernel's steps of one wait. */
#define SNAPSHOT_SETTLE_NS 1000
void collector_snapshot(const struct pt_slot *s, uint64_t now, int hist_slots, struct pt_counters *out)
{
    int64_t parked = 0;
    uint64_t sum = 0, thread = 0, real = 0, busy = 0, parks = 0;
    for (int tries = 0; tries < 8; tries++) {
        parks = __atomic_load_n(&s->parks, __ATOMIC_ACQUIRE);
        parked = __atomic_load_n(&s->parked_now, __ATOMIC_ACQUIRE);
        sum = __atomic_load_n(&s->start_sum, __ATOMIC_ACQUIRE);
        thread = __atomic_load_n(&s->thread_ns, __ATOMIC_ACQUIRE);
        real = __atomic_load_n(&s->real_ns, __ATOMIC_ACQUIRE);
        busy = __atomic_load_n(&s->busy_start, __ATOMIC_ACQUIRE);
        uint64_t last = __atomic_load_n(&s->last_ts, __ATOMIC_ACQUIRE);
        if (parked || last + 1000000 > now) {
            uint64_t t0 = monotonic_ns();
            while (monotonic_ns() - t0 < SNAPSHOT_SETTLE_NS)
                ;
        }
        if (parked == __atomic_load_n(&s->parked_now, __ATOMIC_ACQUIRE) &&
            sum == __atomic_load_n(&s->start_sum, __ATOMIC_ACQUIRE) &&
            thread == __atomic_load_n(&s->thread_ns, __ATOMIC_ACQUIRE) &&
            real == __atomic_load_n(&s->real_ns, __ATOMIC_ACQUIRE) &&
            busy == __atomic_load_n(&s->busy_start, __ATOMIC_ACQUIRE) &&
            parks == __atomic_load_n(&s->parks, __ATOMIC_ACQUIRE))
            break;
    }
    /* Waits in progress count up to this read, not up to NOW: the kernel's
     * sums are as of the read, and a wait that ended between NOW and the
     * read counted past NOW in thread time but not in real time (the next
     * window's real time then passed its thread time by that much). The
     * microseconds past NOW come off the next window. */
    uint64_t read_at = monotonic_ns();
    out->t = now;
    now = read_at > now ? read_at : now;
    out->parks = parks + (parked > 0 ? (uint64_t)parked : 0);
    memcpy(out->ends, s->ends, sizeof(out->ends));
    out->parked_now = parked;
    out->fast_parks = __atomic_load_n(&s->fast_parks, __ATOMIC_ACQUIRE);
    uint64_t inprog = parked > 0 ? (uint64_t)parked * now - sum : 0;
    /* A wait that began as the fields were read would make this negative. */
    if (parked > 0 && (uint64_t)parked * now < sum)
        inprog = 0;
    out->thread_ns = thread + inprog;
    out->real_ns = real + (parked > 0 && busy && busy < now ? now - busy : 0);
    memcpy(out->hist, s->hist, (size_t)hist_slots * sizeof(out->hist[0]));
}

/* PREV becomes CUR, of which only the first HIST_SLOTS histogram slots
 * were read. */
static void advance(struct pt_counters *prev, const struct pt_counters *cur, int hist_slots)
{
    memcpy(prev, cur, offsetof(struct pt_counters, hist));
    memcpy(prev->hist, cur->hist, (size_t)hist_slots * sizeof(prev->hist[0]));
}

/* Starts a new window: resets the kernel's per-window fields. Threads still
 * waiting are the new window's first waiters. */
static void roll_window(struct collector *c, uint32_t nused, uint64_t now)
{
    for (uint32_t i = 0; i < nused; i++) {
        struct pt_slot *s = &c->t->slots[i];
        if (!slot_valid(s))
            continue;
        int64_t parked = __atomic_load_n(&s->parked_now, __ATOMIC_RELAXED);
        uint64_t carry = parked > 0 ? (uint64_t)parked : 0;
        __atomic_store_n(&s->peak_win, carry, __ATOMIC_RELAXED);
        __atomic_store_n(&s->max_win_ns, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&s->threads_win, carry, __ATOMIC_RELAXED);
        __atomic_store_n(&s->win_first_ts, 0, __ATOMIC_RELAXED);
    }
    tracer_start_window(c->t, now);
}

/* A slot's counters as a report's first pass read them. */
struct slot_read {
    uint32_t slot;
    int hist_slots;
    struct pt_counters cur;
};

static void reserve_rows(struct collector *c, uint32_t n);

/* Reads every valid slot below NUSED into C->reads, and returns how many;
 * the rows grow to hold them and the retired sites' rows after them. All
 * are read before any row is named (naming a new blocker can read symbol
 * files for milliseconds, more on a loaded CPU):
 * read one by one between namings, a JVM's waits under way were counted
 * milliseconds past NOW, where its threads' life stops, and a starting
 * JVM waited 7% longer than its threads lived in one 100 ms window. */
static uint32_t read_slots(struct collector *c, uint32_t nused, uint64_t now)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < nused; i++) {
        const struct pt_slot *s = &c->t->slots[i];
        /* A slot folded since the tick's flush (state 2) is counted in
         * its retired site already. */
        if (!slot_valid(s) || c->retiring[i] == 2)
            continue;
        /* Every one: a blocker left for the next report had this window's
         * waits counted in the next, and an exiting process waited there
         * longer than it lived. */
        if (n + (uint32_t)c->retired.n + 1 >= c->rows_cap)
            reserve_rows(c, c->rows_cap + 1);
        struct slot_read *rd = &c->reads[n++];
        rd->slot = i;
        /* A slot above the longest wait so far has never been counted in:
         * at 10 000 blockers a second, the histograms were most of the
         * memory a report read and wrote. The maximum is raised before
         * the slot is counted, and a count missed as it is raised stays
         * in the next window (PREV keeps the slot's older count). */
        rd->hist_slots = metrics_hist_used(__atomic_load_n(&s->max_ns, __ATOMIC_ACQUIRE));
        collector_snapshot(s, now, rd->hist_slots, &rd->cur);
    }
    return n;
}

/* Makes the reused buffers hold N rows. */
void *collector_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        char what_[96];
        snprintf(what_, sizeof(what_), "%zu bytes of report rows", n);
        out_of_memory(what_);
    }
    return q;
}

/* Room for N rows (and their sorting), by the live blockers: sized by the
 * slots ever handed out, a burst's peak kept 40 MiB of rows for good. A
 * table four times larger than needed shrinks (nothing in it is kept from
 * one report to the next). */
static void reserve_rows(struct collector *c, uint32_t n)
{
    uint32_t cap = 64;
    while (cap < n)
        cap *= 2;
    if (cap <= c->rows_cap && (c->rows_cap <= 4096 || c->rows_cap < 4 * cap))
        return;
    c->rows = collector_realloc(c->rows, cap * sizeof(*c->rows));
    c->reads = collector_realloc(c->reads, cap * sizeof(*c->reads));
    c->sorted = collector_realloc(c->sorted, cap * sizeof(*c->sorted));
    c->order = collector_realloc(c->order, cap * sizeof(*c->order));
    c->rows_cap = cap;
}

/* The waker table's top entry per slot, for the slots ever handed out. */
static void reserve_top(struct collector *c, uint32_t nused)
{
    if (nused > c->top_cap) {
        c->top = collector_realloc(c->top, (size_t)nused * sizeof(*c->top));
        c->top_cap = nused;
    }
}

/* One interval's CSP of B's lock (ROW; none, that is 0, when NULL) for its
 * phases. */
void collector_feed_phase(struct collector *c, struct blocker *b, const struct pt_row *row, struct timespec win)
{
    int cur = b->phase - 1;
    if (row)
        phases_feed(&c->phases, &cur, row->pid, row->id, row->cls, row->name, row->csp, c->o->phase_threshold, win);
    else
        phases_feed(&c->phases, &cur, 0, 0, NULL, NULL, 0, c->o->phase_threshold, win);
    b->phase = cur + 1;
}

/* A long run's phases within PHASES_KEEP closed ones: the blockers' open
 * phases move with them. */
static void trim_phases(struct collector *c)
{
    int *map = malloc((size_t)(c->phases.n ? c->phases.n : 1) * sizeof(*map));
    if (map && phases_trim(&c->phases, map)) {
        uint32_t used = tracer_used_slots(c->t);
        for (uint32_t i = 0; i < used; i++)
            if (c->b[i] && c->b[i]->phase)
                c->b[i]->phase = map[c->b[i]->phase - 1] + 1;
    }
    free(map);
}

/* Whether B's waiters wait for work (idle.h): only an event (wait role),
 * never a lock; read again only when its first stack is named again. */
/* Whether S's waiters mostly waited for time to pass (a timer loop: most
 * waits timed out, a few were cut short by a new, earlier deadline) or for
 * an event that has not come (no wait ended yet): not another thread's
 * doing. */
static bool unwoken(const struct pt_slot *s)
{
    uint64_t woken = s->ends[PT_END_WOKEN];
    uint64_t ended = woken + s->ends[PT_END_TIMEOUT] + s->ends[PT_END_INTERRUPTED];
    return woken * 2 < ended || ended == 0;
}

/* The first stack's top frame, read again only when the stack is named
 * again: a report of 10 000 blockers read every one's frames each second. */
const char *blocker_top_frame(struct blocker *b)
{
    const struct pt_stack *st = b->first_stack;
    if (!st)
        return "[unknown]";
    if (!st->naming || st->naming != b->top_naming) {
        b->top_naming = st->naming;
        b->top_frame = stacks_top_frame(st);
    }
    return b->top_frame;
}

/* Idle housekeeping (metrics.md, "The default view"): a wait-role blocker
 * whose first stack waits for work, or a condition (a condition variable,
 * a semaphore, a Java condition or monitor wait; not a bare futex word,
 * which may be a hand-made lock) whose waits other threads did not end.
 * The latter needs no names: a stripped server's timer thread is idle too.
 * A lock is idle only in a runtime's own thread (a JIT compiler taking the
 * compile queue's mutex): the runtime's housekeeping, not the program's. */
bool blocker_idle(struct collector *c, struct blocker *b, const struct pt_slot *s)
{
    const struct pt_stack *st = b->first_stack;
    if (b->join)
        return true;
    if (!st)
        return false;
    if (st->naming != b->idle_naming) {
        b->idle_naming = st->naming;
        size_t m = ((uintptr_t)st >> 4) % (sizeof(c->idle_memo) / sizeof(c->idle_memo[0]));
        if (c->idle_memo[m].st != st || c->idle_memo[m].naming != st->naming) {
            c->idle_memo[m].st = st;
            c->idle_memo[m].naming = st->naming;
            c->idle_memo[m].idle = (uint8_t)idle_stack(st->frames, st->n, !st->truncated);
        }
        b->idle = c->idle_memo[m].idle;
    }
    bool by_stack = !b->cls.wait ? b->idle & PT_IDLE_RUNTIME : b->idle & PT_IDLE_WAIT;
    /* Idle by its stack, for good: its waits read no chain from now on
     * (none would be shown). Not so the unwoken, which a wake may change. */
    if (by_stack && !(s->chain_flags & PT_SLOT_NO_CHAIN))
        __atomic_or_fetch(&((struct pt_slot *)s)->chain_flags, PT_SLOT_NO_CHAIN, __ATOMIC_RELAXED);
    return by_stack ||
           (b->cls.wait && strcmp(b->cls.cls ? b->cls.cls : "futex", "futex") != 0 && unwoken(s));
}

/* A lock-role futex whose top waker is a thread's end (CPython's join
 * lock) becomes a join: a wait, idle. Read once per waker stack naming. */
static void note_join(struct collector *c, struct blocker *b, uint32_t i, const struct waker_entry *top)
{
    if (b->join || b->cls.wait || !top->count || top->k.waker_stack < 0 || (c->t->slots[i].key.kind & 0xff) != PT_KIND_FUTEX)
        return;
    const struct pt_stack *w = stacks_resolve(c->stacks, i, (int)top->k.waker_tgid, top->k.waker_stack);
    if (!w || (w == b->join_checked && w->naming == b->join_naming))
        return;
    b->join_checked = w;
    b->join_naming = w->naming;
    if (classify_join_waker(w)) {
        b->join = true;
        b->cls.wait = true;
        classify_override(c->o, b->cls.cls, &b->cls.wait);
    }
}

void row_set_cgroup(struct pt_row *row, const struct cgroup_name *cg, int ns_pid)
{
    row->cgroup = cg ? cg->path : NULL;
    row->container = cg ? cg->container : NULL;
    row->ns_pid = ns_pid;
}

/* Slot I's row of the window (the figures set by the caller): what the
 * blocker is, where it waited and who woke it most. */
static void describe_row(struct collector *c, struct pt_row *row, uint32_t i, struct blocker *b,
                         const struct waker_entry *top)
{
    const struct pt_slot *s = &c->t->slots[i];
    row->src = i;
    row->kind = pt_kind_names[s->key.kind & 0xff];
    row->pid = b->pid;
    row->comm = b->comm;
    row_set_cgroup(row, b->cgroup, b->ns_pid);
    row->id = slot_blocker_id(s) - b->cls.field;
    row->name = b->name;
    row->cls = b->cls.cls;
    row->wait = b->cls.wait;
    row->first_thread = b->thread;
    row->first_stack = b->first_stack;
    row->top_frame = blocker_top_frame(b);
    row->objects = 1;
    row->idle = blocker_idle(c, b, s);
    if (top->count) {
        row->waker_stack = stacks_resolve(c->stacks, i, (int)top->k.waker_tgid, top->k.waker_stack);
        row->waker_top_frame = stacks_top_frame(row->waker_stack);
        snprintf(row->waker_comm, sizeof(row->waker_comm), "%s",
                 procmaps_get(c->sv->maps, (int)top->k.waker_tgid)->comm);
        row->waker_ns = top->ns;
        row->waker_wakeups = top->count;
    }
}

/* The thread time a report's rows add to their processes: all of it
 * waited, the wait-role part idle. */
struct report_sums {
    struct pid_sums idle, waited;
};

static void add_to_process(struct report_sums *sums, int pid, bool wait, uint64_t ns)
{
    pid_sum_add(&sums->waited, pid, ns);
    if (wait)
        pid_sum_add(&sums->idle, pid, ns);
}

/* The row of the K-th slot read, when its blocker did anything in the
 * window: counted in the totals and its process's sums, and shown unless
 * under --print-threshold (then summed in the rest). */
static void live_row(struct collector *c, struct pt_model *r, uint32_t k, bool interval,
                     const struct waker_entry *top, struct report_sums *sums)
{
    /* The whole run's figures are from zero. */
    const struct pt_counters zero = {.t = c->start_ns};
    const uint32_t i = c->reads[k].slot;
    const struct pt_slot *s = &c->t->slots[i];
    struct blocker *b = collector_record(c, i);
    const struct pt_counters *cur = &c->reads[k].cur;
    const int hist_slots = c->reads[k].hist_slots;
    struct pt_window_extra extra;
    if (interval)
        extra = (struct pt_window_extra){s->peak_win, s->max_win_ns, s->threads_win, s->win_first_ts, s->last_ts};
    else
        extra = (struct pt_window_extra){s->peak, s->max_ns, s->threads, s->first_ts, s->last_ts};
    struct pt_row *row = &r->rows[r->nrows];
    /* All but the figures, which metrics_window clears itself: a report
     * of 10 000 rows cleared each twice. */
    memset(row, 0, offsetof(struct pt_row, fig));
    memset(&row->fig + 1, 0, sizeof(*row) - offsetof(struct pt_row, fig) - sizeof(row->fig));
    /* A blocker's counters start at zero, so a new one's window starts
     * from zero at the window's start. */
    b->prev.t = c->window_start;
    metrics_window(interval ? &b->prev : &zero, cur, &extra, hist_slots, &row->fig);
    if (interval)
        advance(&b->prev, cur, hist_slots);
    if (!row->fig.parks && !row->fig.thread_time_ns && !row->fig.parked_now && !row->fig.fast_parks)
        return;
    r->totals.waits += row->fig.parks;
    r->totals.thread_time_ns += row->fig.thread_time_ns;
    r->totals.blockers++;
    collector_resolve(c, i);
    note_join(c, b, i, &top[i]);
    /* Every wait is its process's, and every wait-role wait idle time
     * of it, printed or not; a futex shared by processes is no one
     * process's (its row's pid is the first waiter's, and the others'
     * waits charged to that process made it wait longer than it lived);
     * a goroutine's is no thread's (a thousand goroutines wait on a few
     * threads: their time is the goroutines'). */
    if (!(c->t->slots[i].key.kind & PT_KEY_SHARED) && (c->t->slots[i].key.kind & 0xff) != PT_KIND_GO_PARK)
        add_to_process(sums, b->pid, b->cls.wait, row->fig.thread_time_ns);
    if (cur->parks < c->o->print_threshold) {
        row->objects = 1;
        rest_add(&r->totals.rest, row);
        return;
    }
    describe_row(c, row, i, b, &top[i]);
    r->nrows++;
}

/* The recycled blockers' rows after the live ones; a recycled blocker's
 * wait-role waits stay idle time of its process (a process that exited
 * had its join waits recycled: CSP 10% low). */
static void recycled_rows(struct collector *c, struct pt_model *r, bool interval, uint64_t now,
                          struct report_sums *sums)
{
    int live_rows = r->nrows;
    r->nrows += retired_rows(&c->retired, interval, interval ? c->window_start : c->start_ns, now,
                             &r->rows[r->nrows], &r->totals.waits, &r->totals.blockers);
    for (int k = live_rows; k < r->nrows; k++) {
        struct pt_row *row = &r->rows[k];
        if (row->waker_stack)
            row->waker_top_frame = stacks_top_frame(row->waker_stack);
        r->totals.thread_time_ns += row->fig.thread_time_ns;
        if (!row_of_goroutines(row))
            add_to_process(sums, row->pid, row->wait, row->fig.thread_time_ns);
    }
}

/* Each blocker's top waker into c->top; with MODEL_STACKS in WHAT, the
 * table as read into *RAW too (wakers_top reorders its own copy). */
static void read_wakers(struct collector *c, unsigned what, uint32_t nused, struct wakers *raw)
{
    struct wakers wk;
    *raw = (struct wakers){0};
    wakers_read(&c->kernel, c->t->slots, nused, &wk);
    if (what & MODEL_STACKS) {
        raw->e = malloc((size_t)(wk.n ? wk.n : 1) * sizeof(*raw->e));
        if (raw->e) {
            raw->n = wk.n;
            memcpy(raw->e, wk.e, (size_t)wk.n * sizeof(*raw->e));
        } else {
            fprintf(stderr, "parktrace: out of memory for the waker table: this report's stacks have no wakers\n");
        }
    }
    wakers_top(&wk, c->stacks, nused, c->top);
    wakers_free(&wk);
}

/* The report's rows: ranked, grouped and cut as the options say, and its
 * phases. */
static void view_and_phases(struct collector *c, struct pt_model *r)
{
    _Static_assert(PT_SORT_TIME == (int)PT_RANK_TIME && PT_SORT_CSP == (int)PT_RANK_CSP &&
                       PT_SORT_PARKS == (int)PT_RANK_PARKS && PT_SORT_PEAK == (int)PT_RANK_PEAK,
                   "options.h keeps rank.h's order");
    view_rows(r, c->o->by, c->o->top, (enum pt_rank_key)c->o->sort, !c->o->show_idle, c->order, c->sorted);
    trim_phases(c);
    for (int i = 0; i < c->phases.n; i++) {
        const struct phase *p = &c->phases.p[i];
        *model_add_phase(r) = (struct pt_model_phase){.pid = p->pid, .id = p->id, .cls = p->cls,
                                                      .name = p->name[0] ? p->name : NULL,
                                                      .start = p->start, .end = p->end, .open = p->open,
                                                      .peak = p->peak, .mean = phase_mean(p)};
    }
}

/* The totals beside the rows: drops, stacks, the blocker table. */
static void report_totals(struct collector *c, struct pt_model *r)
{
    uint64_t drops[PT_DROP_COUNT];
    for (int i = 0; i < PT_DROP_COUNT; i++)
        drops[i] = tracer_drop(c->t, i);
    r->totals.dropped_events = drops[PT_DROP_BLOCKERS] + drops[PT_DROP_WAITING] + drops[PT_DROP_THREADS] +
                               drops[PT_DROP_STACKAGG] + drops[PT_DROP_EXECS] + drops[PT_DROP_LIVES];
    r->totals.dropped_stacks = drops[PT_DROP_STACKS] + drops[PT_DROP_SAMPLES] + stacks_lost(c->stacks);
    /* The table, 65 536 buckets whatever it holds, is read only when the
     * kernel has made entries since the last tally. */
    uint64_t made = slot_table_stack_entries_made(c->t);
    if (made != c->tallied_entries)
        stacks_tally(c->stacks);
    c->tallied_entries = made;
    stacks_tallied(c->stacks, &r->totals.stacks, &r->totals.truncated_stacks);
    r->totals.live_blockers = c->live_blockers;
    r->totals.recycled_blockers = c->retired.count;
    r->totals.phases_forgotten = c->phases.forgotten;
    if (c->t->stacks_sampled) {
        r->totals.stack_budget = c->o->stack_budget;
        struct pt_hot_counts h;
        tracer_hot_counts(c->t, &h);
        r->totals.stack_samples = h.stack_samples;
        r->totals.stack_sampled_ns = h.stack_sampled_ns;
        r->totals.stack_sampled_sq = h.stack_sampled_sq;
        r->totals.stack_samples_lost = h.stack_samples_lost;
        r->totals.chains_unread = tracer_chains_unread(c->t);
    }
}

const struct pt_model *collector_report(struct collector *c, enum pt_report_type type, unsigned what)
{
    bool interval = type == PT_REPORT_INTERVAL;
    struct pt_model *r = &c->model;

    c->flush = true;
    collector_tick(c);
    /* The window ends after the tick, which can take milliseconds (JVM
     * discovery among hundreds of processes): a wait that ended in
     * between was counted to its end, past a NOW read before, and the next
     * window's thread time came out short of its real time. */
    uint64_t now = monotonic_ns();
    /* The processes' lives at NOW, before the slots: read as each row
     * asked, or at the roll, threads that died in the milliseconds since
     * counted their life to this window; an exiting process's next and
     * last window then lived less than it waited. */
    csp_read_at(&c->csp, now);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    model_clear(r);
    r->type = type;
    r->wall = wall;
    uint32_t nused = tracer_used_slots(c->t);
    /* The tick's scan counted the slots taken (every valid one among
     * them); those published since make the rows grow as they are read. */
    reserve_rows(c, c->occupied + (uint32_t)c->retired.n + 1 + 256);
    reserve_top(c, nused);
    const uint32_t nread = read_slots(c, nused, now);
    r->rows = c->rows;
    r->window_ns = now - (interval ? c->window_start : c->start_ns);
    r->sees_fast_parks = c->o->probes == PT_PROBES_UPROBES;
    uint64_t cpu = process_cpu_ns();
    r->self_cpu_ns = cpu - (interval ? c->cpu_window_ns : c->cpu_start_ns);
    if (interval)
        c->cpu_window_ns = cpu;

    struct wakers raw;
    read_wakers(c, what, nused, &raw);
    struct report_sums sums = {0};
    for (uint32_t k = 0; k < nread; k++)
        live_row(c, r, k, interval, c->top, &sums);
    recycled_rows(c, r, interval, now, &sums);
    apply_csp(c, r, &sums.idle, now, interval);
    model_processes(c, r, &sums.idle, &sums.waited, now, interval);
    free(sums.idle.v);
    free(sums.waited.v);
    if (interval) {
        roll_window(c, nused, now);
        retired_roll(&c->retired);
        csp_roll(&c->csp, now);
        c->window_start = now;
        c->window_wall = wall;
    }
    view_and_phases(c, r);
    report_totals(c, r);
    collector_model_chains(c, r, interval);
    if (what & MODEL_STACKS) {
        collector_model_stacks(c, r, &raw, what & MODEL_WAKERS);
        wakers_free(&raw);
    }
    return r;
}
