#include "retired.h"
#include "oom.h"
#include "str_hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *grow(void *v, int *cap, size_t size)
{
    int want = *cap ? 2 * *cap : 64;
    void *p = realloc(v, (size_t)want * size);
    if (!p) {
        out_of_memory("recycled blockers");
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

/* FNV-1a, over S's bytes up to its end, into H. */
/* H over S and a terminator, so that chained strings do not run together. */
static uint64_t hash_str(uint64_t h, const char *s)
{
    return (str_hash_from(h, s) ^ 0xff) * 0x100000001b3ull;
}

static uint64_t hash_stack(const struct pt_stack *st)
{
    uint64_t h = STR_HASH_SEED ^ (uint64_t)st->n ^ (uint64_t)st->unwound << 32 ^ (uint64_t)st->truncated << 33;
    for (int i = 0; i < st->n; i++)
        h = hash_str(hash_str(h, st->frames[i].name), st->frames[i].module);
    return h;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_stack(const struct pt_stack *a, const struct pt_stack *b)
{
    if (a->n != b->n || a->unwound != b->unwound || a->truncated != b->truncated)
        return false;
    for (int i = 0; i < a->n; i++)
        if (!same_str(a->frames[i].name, b->frames[i].name) || !same_str(a->frames[i].module, b->frames[i].module))
            return false;
    return true;
}

static char *copy_str(const char *s, uint64_t *bytes)
{
    if (!s)
        return NULL;
    char *c = strdup(s);
    if (!c) {
        out_of_memory("recycled blockers");
    }
    *bytes += strlen(s) + 1;
    return c;
}

/* A copy of ST (hash H) of its own, chained at HEAD. */
static const struct pt_stack *copy_stack(struct retired *r, const struct pt_stack *st, uint64_t h,
                                         struct retired_frames **head)
{
    struct retired_frames *f = calloc(1, sizeof(*f));
    struct pt_frame *frames = calloc((size_t)(st->n ? st->n : 1), sizeof(*frames));
    if (!f || !frames) {
        out_of_memory("recycled blockers");
    }
    f->hash = h;
    f->st = *st;
    f->st.frames = frames;
    r->frames_bytes += sizeof(*f) + (size_t)st->n * sizeof(*frames);
    for (int i = 0; i < st->n; i++) {
        frames[i].name = copy_str(st->frames[i].name, &r->frames_bytes);
        frames[i].module = copy_str(st->frames[i].module, &r->frames_bytes);
    }
    f->next = *head;
    *head = f;
    return &f->st;
}

/* ST's copy of its own, shared by every retired site and stack that reads
 * the same. */
static const struct pt_stack *intern(struct retired *r, const struct pt_stack *st)
{
    if (!st)
        return NULL;
    size_t m = ((uintptr_t)st >> 4) % (sizeof(r->memo) / sizeof(r->memo[0]));
    if (st->naming && r->memo[m].st == st && r->memo[m].naming == st->naming)
        return r->memo[m].copy;
    uint64_t h = hash_stack(st);
    struct retired_frames **head = &r->frames[h % RETIRED_BUCKETS];
    const struct pt_stack *copy = NULL;
    for (struct retired_frames *f = *head; f && !copy; f = f->next)
        if (f->hash == h && same_stack(&f->st, st))
            copy = &f->st;
    if (!copy)
        copy = copy_stack(r, st, h, head);
    r->memo[m].st = st;
    r->memo[m].naming = st->naming;
    r->memo[m].copy = copy;
    return copy;
}

/* Room for one more entry in a hash-chained array of CAP. */
static void grow_chained(void **v, int **next, int *cap, size_t size)
{
    *v = grow(*v, cap, size);
    int *n = realloc(*next, (size_t)*cap * sizeof(**next));
    if (!n) {
        out_of_memory("recycled blockers");
    }
    *next = n;
}

/* Sites of exited processes folded together (retired_fold) are told
 * apart by command (pid 0); the others by pid. */
static unsigned site_bucket(int pid, const char *comm, const char *cgroup, const char *kind, const char *cls,
                            const char *site, bool idle)
{
    uint64_t h = hash_str(hash_str(hash_str(STR_HASH_SEED ^ (uint64_t)(unsigned)pid ^ (uint64_t)idle << 40 ^
                                                (uint64_t)(uintptr_t)cgroup,
                                            kind), cls), site);
    if (pid == PT_RETIRED_EXITED)
        h = hash_str(h, comm);
    return (unsigned)(h % RETIRED_BUCKETS);
}

/* The site of (PID, COMM, CGROUP, KIND, CLS, SITE) and idleness, made
 * when new. CGROUP is compared by address (kept for the run, interned).
 * Idle members stay apart from the rest: a HotSpot service thread's wait
 * and a Java thread's wait in the VM share their top frame, and one site
 * of both was contention showing the service thread's stack. */
static struct retired_site *site_of(struct retired *r, int pid, const char *comm, const char *cgroup, const char *kind,
                                    const char *cls, const char *site, bool idle)
{
    unsigned b = site_bucket(pid, comm, cgroup, kind, cls, site, idle);
    int i;
    for (i = r->site_head[b] - 1; i >= 0; i = r->site_next[i] - 1) {
        const struct retired_site *s = &r->v[i];
        if (s->pid == pid && s->idle == idle && s->cgroup == cgroup && strcmp(s->kind, kind) == 0 &&
            strcmp(s->cls, cls) == 0 &&
            strcmp(s->site, site) == 0 && (pid != PT_RETIRED_EXITED || strcmp(s->comm, comm) == 0))
            return &r->v[i];
    }
    if (r->n == r->cap)
        grow_chained((void **)&r->v, &r->site_next, &r->cap, sizeof(*r->v));
    i = r->n++;
    struct retired_site *s = &r->v[i];
    memset(s, 0, sizeof(*s));
    s->pid = pid;
    s->kind = kind;
    s->cgroup = cgroup;
    snprintf(s->cls, sizeof(s->cls), "%s", cls);
    snprintf(s->site, sizeof(s->site), "%s", site);
    snprintf(s->comm, sizeof(s->comm), "%s", comm);
    s->idle = idle;
    /* Chained under what it holds (a copy, cut to its size). */
    b = site_bucket(s->pid, s->comm, s->cgroup, s->kind, s->cls, s->site, idle);
    r->site_next[i] = r->site_head[b];
    r->site_head[b] = i + 1;
    r->bytes += sizeof(*s) + 2 * sizeof(int);
    return s;
}

/* The stack exited processes' stacks become when their shapes go, and
 * live processes' at the deepest fold. */
static struct pt_frame exited_frame = {.name = "[exited process]"};
static const struct pt_stack exited_stack = {.n = 1, .frames = &exited_frame};
static struct pt_frame folded_frame = {.name = "[folded]"};
static const struct pt_stack folded_stack = {.n = 1, .frames = &folded_frame};

static const struct pt_stack *shapeless(int pid)
{
    return pid == PT_RETIRED_EXITED ? &exited_stack : &folded_stack;
}

/* Adds site O (of another struct retired) to S, in R; without SHAPES, its
 * stacks are not kept. */
static void merge_site(struct retired *r, struct retired_site *s, const struct retired_site *o, bool shapes)
{
    if (!s->objects)
        s->id = o->id;
    if (!s->objects || o->heaviest_ns > s->heaviest_ns) {
        s->heaviest_ns = o->heaviest_ns;
        if (s->pid != PT_RETIRED_EXITED)     /* pid 0's sites are told apart by command */
            snprintf(s->comm, sizeof(s->comm), "%s", o->comm);
        snprintf(s->thread, sizeof(s->thread), "%s", o->thread);
        s->wait = o->wait;
        s->container = s->cgroup ? o->container : NULL;
        s->ns_pid = s->pid != PT_RETIRED_EXITED ? o->ns_pid : 0;
        s->first_stack = intern(r, shapes ? o->first_stack : shapeless(s->pid));
    }
    /* O's stacks may be another struct retired's (retired_fold frees it):
     * the waker's is copied here, as the first stack is. */
    struct pt_waker w = o->waker;
    if (w.stack)
        w.stack = shapes ? intern(r, w.stack) : NULL;
    pt_waker_tally(&s->waker, &w);
    add_counters(&s->cur, &o->cur);
    add_counters(&s->prev, &o->prev);
    add_extra(&s->whole, &o->whole);
    add_extra(&s->win, &o->win);
    s->objects += o->objects;
    s->win_objects += o->win_objects;
}

void retired_add_waker(struct retired *r, const struct retired_member *m, const struct pt_stack *stack,
                       const char *comm, uint64_t count, uint64_t ns)
{
    struct pt_waker w = {.stack = intern(r, stack), .wakeups = count, .ns = ns};
    snprintf(w.comm, sizeof(w.comm), "%s", comm);
    pt_waker_tally(&site_of(r, m->pid, m->comm, m->cgroup, m->kind, m->cls, m->site, m->idle)->waker, &w);
}

void retired_add(struct retired *r, const struct retired_member *m)
{
    struct retired_site one = {.heaviest_ns = m->final.thread_ns, .wait = m->wait, .idle = m->idle,
                               .first_stack = m->first_stack, .cur = m->final, .prev = m->prev,
                               .cgroup = m->cgroup, .container = m->container, .ns_pid = m->ns_pid,
                               .id = m->id,
                               .whole = m->whole, .win = m->win, .objects = 1,
                               .win_objects = m->final.parks != m->prev.parks || m->final.thread_ns != m->prev.thread_ns};
    snprintf(one.comm, sizeof(one.comm), "%s", m->comm);
    snprintf(one.thread, sizeof(one.thread), "%s", m->thread);
    merge_site(r, site_of(r, m->pid, m->comm, m->cgroup, m->kind, m->cls, m->site, m->idle), &one, true);
    r->count++;
}

/* A site's copy of the class LEAF, which outlives its blocker (looked for
 * once per new retired stack). */
static const char *site_class(struct retired *r, const char *leaf)
{
    size_t m = hash_str(0, leaf) % (sizeof(r->class_memo) / sizeof(r->class_memo[0]));
    if (r->class_memo[m].cls && strcmp(r->class_memo[m].cls, leaf) == 0)
        return r->class_memo[m].cls;
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->v[i].cls, leaf) == 0)
            return r->class_memo[m].cls = r->v[i].cls;
    return "[recycled]";
}

void retired_add_stack(struct retired *r, const char *root, const struct pt_stack *stack,
                       const struct pt_model_stack *who, uint64_t count, uint64_t ns, uint64_t own_count,
                       uint64_t own_ns)
{
    const char *leaf = who->leaf;
    stack = intern(r, stack);
    const char *name = who->name ? who->name : "";
    uint64_t h = hash_str(hash_str(hash_str(hash_str(STR_HASH_SEED ^ (uint64_t)(uintptr_t)stack ^
                                                     (uint64_t)(unsigned)who->pid << 1 ^ (uint64_t)who->wait ^
                                                     (uint64_t)(uintptr_t)who->cgroup,
                                                     who->kind),
                                            root),
                                   leaf),
                          name);
    unsigned b = (unsigned)(h % RETIRED_BUCKETS);
    int i;
    for (i = r->stack_head[b] - 1; i >= 0; i = r->stack_next[i] - 1) {
        const struct pt_model_stack *e = &r->stacks[i];
        if (e->stack == stack && e->pid == who->pid && e->cgroup == who->cgroup && strcmp(e->kind, who->kind) == 0 &&
            e->wait == who->wait &&
            strcmp(e->root, root) == 0 && strcmp(e->leaf, leaf) == 0 && strcmp(e->name ? e->name : "", name) == 0)
            break;
    }
    if (i < 0) {
        if (r->nstacks == r->stacks_cap)
            grow_chained((void **)&r->stacks, &r->stack_next, &r->stacks_cap, sizeof(*r->stacks));
        i = r->nstacks++;
        struct pt_model_stack *e = &r->stacks[i];
        memset(e, 0, sizeof(*e));
        snprintf(e->root, sizeof(e->root), "%s", root);
        e->stack = stack;
        /* The class string outlives its blocker: the site keeps a copy. */
        e->leaf = site_class(r, leaf);
        /* Its id went with its slot; pid, kind, role and its name (a global
         * variable's, one of a few) stay: a process that exits has its
         * blockers recycled at once, and its pprof samples keep their
         * labels. */
        e->pid = who->pid;
        e->uid = who->uid;
        e->cgroup = who->cgroup;
        e->container = who->container;
        e->kind = who->kind;
        e->wait = who->wait;
        e->name = *name ? strdup(name) : NULL;
        snprintf(e->id, sizeof(e->id), "[recycled]");
        r->bytes += sizeof(*e) + sizeof(int) + (e->name ? strlen(e->name) + 1 : 0);
        r->stack_next[i] = r->stack_head[b];
        r->stack_head[b] = i + 1;
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
        metrics_window(&from, &cur, interval ? &s->win : &s->whole, PT_HIST_SLOTS, &row->fig);
        if (!row->fig.parks && !row->fig.thread_time_ns)
            continue;
        *waits += row->fig.parks;
        *blockers += interval ? s->win_objects : s->objects;
        row->kind = s->kind;
        row->pid = s->pid;
        row->id = s->objects == 1 ? s->id : 0;   /* one blocker: its own id */
        row->comm = s->comm;
        row->cgroup = s->cgroup;
        row->container = s->container;
        row->ns_pid = s->ns_pid;
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
        if (s->waker.stack) {
            /* Over the run: a window's share is not kept per site. */
            row->waker_stack = s->waker.stack;
            snprintf(row->waker_comm, sizeof(row->waker_comm), "%s", s->waker.comm);
            row->waker_ns = s->waker.ns;
            row->waker_wakeups = s->waker.wakeups;
        }
        n++;
    }
    return n;
}

uint64_t retired_bytes(const struct retired *r)
{
    return r->bytes + r->frames_bytes;
}

/* Whether PID has exited, asked once per run of one pid's sites or stacks
 * (they come in runs: each process's were added together). */
struct pid_memo {
    int pid;
    bool gone;
};

static bool gone_pid(struct pid_memo *m, int pid, bool (*alive)(int pid))
{
    if (pid == PT_RETIRED_EXITED)
        return true;
    if (pid != m->pid) {
        m->pid = pid;
        m->gone = !alive(pid);
    }
    return m->gone;
}

void retired_fold(struct retired *r, bool (*alive)(int pid), enum retired_depth depth)
{
    struct retired *to = calloc(1, sizeof(*to));
    if (!to) {
        out_of_memory("recycled blockers");
    }
    struct pid_memo memo = {.pid = -1};
    for (int i = 0; i < r->n; i++) {
        const struct retired_site *o = &r->v[i];
        bool gone = gone_pid(&memo, o->pid, alive);
        bool shapes = gone ? depth == RETIRED_EXITED_SHAPES : depth != RETIRED_ALL;
        const char *comm = shapes || !gone ? o->comm : "[exited]";
        const char *site = shapes ? o->site : gone ? "[exited]" : "[folded]";
        /* Exited processes folded past their shapes lose their cgroup too:
         * a row per (cgroup, kind, class) of every container ever seen is
         * no bound. */
        const char *cgroup = shapes || !gone ? o->cgroup : NULL;
        merge_site(to, site_of(to, gone ? PT_RETIRED_EXITED : o->pid, comm, cgroup, o->kind, o->cls, site, o->idle), o,
                   shapes);
    }
    for (int i = 0; i < r->nstacks; i++) {
        const struct pt_model_stack *e = &r->stacks[i];
        bool gone = gone_pid(&memo, e->pid, alive);
        bool shapes = gone ? depth == RETIRED_EXITED_SHAPES : depth != RETIRED_ALL;
        int pid = gone ? PT_RETIRED_EXITED : e->pid;
        struct pt_model_stack who = {.leaf = e->leaf, .pid = pid, .uid = e->uid, .kind = e->kind, .wait = e->wait,
                                     .name = e->name, .cgroup = shapes || !gone ? e->cgroup : NULL,
                                     .container = shapes || !gone ? e->container : NULL};
        retired_add_stack(to, shapes || !gone ? e->root : "[exited]", shapes ? e->stack : shapeless(pid), &who,
                          e->count, e->ns, e->own_count, e->own_ns);
    }
    to->count = r->count;
    to->folds = r->folds + 1;
    retired_free(r);
    *r = *to;
    free(to);
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
    free(r->site_next);
    for (int i = 0; i < r->nstacks; i++)
        free((char *)r->stacks[i].name);
    free(r->stacks);
    free(r->stack_next);
    for (int b = 0; b < RETIRED_BUCKETS; b++)
        for (struct retired_frames *f = r->frames[b], *next; f; f = next) {
            next = f->next;
            for (int i = 0; i < f->st.n; i++) {
                free(f->st.frames[i].name);
                free(f->st.frames[i].module);
            }
            free(f->st.frames);
            free(f);
        }
    memset(r, 0, sizeof(*r));
}
