#include "group.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "oom.h"

static const char *group_key(const struct pt_row *row, enum pt_group by)
{
    return by == PT_BY_CLASS ? row->cls : row->top_frame ? row->top_frame : "[unknown]";
}

static bool same_group(const struct pt_row *a, const struct pt_row *b, enum pt_group by)
{
    /* By cgroup, rows of any process in it: the cgroup's path is kept once
     * for the run and compared by address. */
    if (by == PT_BY_CGROUP)
        return a->cgroup == b->cgroup && strcmp(a->kind, b->kind) == 0 && strcmp(a->cls, b->cls) == 0;
    return a->pid == b->pid && strcmp(a->kind, b->kind) == 0 &&
           strcmp(group_key(a, by), group_key(b, by)) == 0;
}

/* A row's top waker, and back (metrics.md, "The waker on every contended
 * row": a group of short-lived objects kept the waker of its heaviest
 * member, often none; it keeps the one with the most wait time among its
 * members' top wakers, those of one stack added up). */
static struct pt_waker waker_of(const struct pt_row *r)
{
    struct pt_waker w = {r->waker_stack, r->waker_top_frame, "", r->waker_ns, r->waker_wakeups};
    memcpy(w.comm, r->waker_comm, sizeof(w.comm));
    return w;
}

static void set_waker(struct pt_row *into, const struct pt_waker *w)
{
    into->waker_stack = w->stack;
    into->waker_top_frame = w->top_frame;
    memcpy(into->waker_comm, w->comm, sizeof(into->waker_comm));
    into->waker_ns = w->ns;
    into->waker_wakeups = w->wakeups;
}

/* Adds ROW to the group INTO, which shows its heaviest member's identity
 * and stacks. */
static void merge_into(struct pt_row *into, const struct pt_row *row, enum pt_group by)
{
    struct pt_waker had = waker_of(into), adds = waker_of(row);
    /* One process: the members' shares of its working time add up. */
    bool has_csp = into->has_csp || row->has_csp, in_phase = into->in_phase || row->in_phase;
    double csp = (into->has_csp ? into->csp : 0) + (row->has_csp ? row->csp : 0);
    uint32_t objects = into->objects + row->objects;
    bool idle = into->idle && row->idle;
    /* Compared before a heavier member takes over the group's identity. */
    bool mixed = strcmp(into->cls, row->cls) != 0;
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
    pt_waker_tally(&had, &adds);
    set_waker(into, &had);
    into->has_csp = has_csp;
    into->csp = csp;
    into->in_phase = in_phase;
    into->objects = objects;
    into->idle = idle;
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
        if (g == n)
            r->rows[n++] = *row;
        else
            merge_into(&r->rows[g], row, by);
    }
    r->nrows = n;
    /* A cgroup's row stands for its processes: no one pid, and CSPs of
     * different processes do not add up (docs/contract/cli.md). */
    for (int i = 0; by == PT_BY_CGROUP && i < n; i++) {
        r->rows[i].pid = -1;
        r->rows[i].ns_pid = 0;
        r->rows[i].has_csp = false;
        r->rows[i].in_phase = false;
    }
}

static uint64_t site_hash(const struct pt_row *row)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(unsigned)row->pid ^ (uint64_t)row->idle << 40;
    const char *parts[3] = {row->kind, row->cls, group_key(row, PT_BY_SITE)};
    for (int i = 0; i < 3; i++) {
        for (const char *p = parts[i]; *p; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
        h = (h ^ 0xff) * 0x100000001b3ull;
    }
    return h;
}

/* One folded row per (pid, kind, class, site) and idleness: a site's
 * idle members (a HotSpot thread's wait whose stack reached its start)
 * and those that cannot be told idle (the same wait, its stack cut short)
 * made one row that was not idle, 50 objects of a JVM's service threads
 * ranked above its contention (issue 37). */
static bool same_site(const struct pt_row *a, const struct pt_row *b)
{
    return same_group(a, b, PT_BY_SITE) && strcmp(a->cls, b->cls) == 0 && a->idle == b->idle;
}

static void *zeroed(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    if (!p) {
        out_of_memory("the report's rows");
    }
    return p;
}

/* An open-addressing table for N rows: *CAP slots (a power of two, at
 * least 2N), each -1 (empty) or a row's index. */
static int *row_table(int n, size_t *cap)
{
    *cap = 16;
    while (*cap < 2 * (size_t)n)
        *cap *= 2;
    int *slot = zeroed(*cap, sizeof(*slot));
    memset(slot, 0xff, *cap * sizeof(*slot));
    return slot;
}

/* Which of ROWS[0..N) are among the K rows PICKED points to. */
static bool *picked_marks(const struct pt_row *rows, int n, struct pt_row *const *picked, int k)
{
    bool *in = zeroed((size_t)n, sizeof(*in));
    for (int i = 0; i < k; i++)
        in[picked[i] - rows] = true;
    return in;
}

void fold_rows(struct pt_model *r, struct pt_row *const *picked, int k)
{
    int n = r->nrows, out = 0;
    size_t cap;
    int *slot = row_table(n, &cap);
    bool *top = picked_marks(r->rows, n, picked, k);
    /* In place: rows kept move down (OUT <= I), each once, and a row folds
     * into one below OUT. */
    struct pt_row *rows = r->rows;
    for (int i = 0; i < n; i++) {
        const struct pt_row *row = &rows[i];
        if (top[i]) {
            if (out != i)
                rows[out] = *row;
            out++;
            continue;
        }
        size_t h = (size_t)site_hash(row) & (cap - 1);
        while (slot[h] >= 0 && !same_site(&rows[slot[h]], row))
            h = (h + 1) & (cap - 1);
        if (slot[h] < 0) {
            slot[h] = out;
            if (out != i)
                rows[out] = *row;
            out++;
        } else {
            merge_into(&rows[slot[h]], row, PT_BY_SITE);
        }
    }
    free(slot);
    free(top);
    r->nrows = out;
}

void rest_add(struct pt_rest *rest, const struct pt_row *row)
{
    rest->rows++;
    rest->objects += row->objects;
    rest->parks += row->fig.parks;
    rest->thread_time_ns += row->fig.thread_time_ns;
}

void rest_of(const struct pt_row *rows, int n, struct pt_row *const *picked, int k, struct pt_rest *rest)
{
    bool *in = picked_marks(rows, n, picked, k);
    for (int i = 0; i < n; i++)
        if (!in[i])
            rest_add(rest, &rows[i]);
    free(in);
}

void fold_dropped(struct pt_row *shown, int k, const struct pt_row *rows, int n, struct pt_row *const *picked,
                  struct pt_rest *rest)
{
    bool *in = picked_marks(rows, n, picked, k);
    for (int i = 0; i < n; i++) {
        if (in[i])
            continue;
        int j;
        for (j = 0; j < k; j++)
            if (shown[j].objects > 1 && same_site(&shown[j], &rows[i])) {
                merge_into(&shown[j], &rows[i], PT_BY_SITE);
                break;
            }
        if (j == k)
            rest_add(rest, &rows[i]);
    }
    free(in);
}

/* Whether ROW is part of an object other rows can be parts of, and that
 * object's address: a glibc condition variable's waiters sleep on one of
 * its two __g_signals words, side by side in one aligned 8 bytes; a Go
 * RWMutex's on one of its three semaphores, each row at the RWMutex's own
 * address already. */
static bool object_part(const struct pt_row *row, uint64_t *base)
{
    if (row->src == UINT32_MAX)
        return false;
    /* CPython's GIL is a condition variable and a mutex of its own. */
    if (!strcmp(row->kind, "futex") && (!strcmp(row->cls, "pthread_cond") || !strcmp(row->cls, "python-gil"))) {
        *base = row->id & ~7ull;
        return true;
    }
    *base = row->id;
    return !strcmp(row->kind, "go-park") && !strcmp(row->cls, "sync.RWMutex");
}

void merge_object_parts(struct pt_model *r)
{
    int n = r->nrows;
    if (n < 2)
        return;
    size_t cap;
    int *slot = row_table(n, &cap);
    int out = 0;
    for (int i = 0; i < n; i++) {
        /* Rows are 640 bytes: moved only once a merge has left a gap. */
        const struct pt_row *row = &r->rows[i];
        uint64_t base, other;
        if (!object_part(row, &base)) {
            if (out != i)
                r->rows[out] = *row;
            out++;
            continue;
        }
        size_t h = (size_t)((base >> 3) ^ ((uint64_t)(unsigned)row->pid * 0x9E3779B97F4A7C15ull)) & (cap - 1);
        while (slot[h] >= 0 && !(r->rows[slot[h]].pid == row->pid && !strcmp(r->rows[slot[h]].kind, row->kind) &&
                                 object_part(&r->rows[slot[h]], &other) && other == base))
            h = (h + 1) & (cap - 1);
        if (slot[h] < 0) {
            slot[h] = out;
            if (out != i)
                r->rows[out] = *row;
            out++;
            continue;
        }
        /* Its partner row is below OUT, which is at most I: ROW stays put. */
        struct pt_row *into = &r->rows[slot[h]];
        uint64_t id = into->id < row->id ? into->id : row->id;
        uint32_t objects = into->objects;
        /* One object, one kind of waiter: a stack seen idle on either part
         * (the other's may be cut short) tells for both. */
        bool idle = into->idle || row->idle;
        merge_into(into, row, PT_BY_OBJECT);
        into->id = id;
        into->objects = objects;
        into->idle = idle;
        /* One object, one blocker in the totals too. */
        if (r->totals.blockers)
            r->totals.blockers--;
    }
    free(slot);
    r->nrows = out;
}
