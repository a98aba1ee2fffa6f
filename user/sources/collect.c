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

#define MAX_RESOLVE_TRIES 20
#define MAX_RESTACKS 3
/* A JVM is known to the class namer a moment before its code is walked as
 * Java frames: a blind first stack may come back blind a few times. */
#define MAX_BLIND_RESTACKS 16

_Static_assert(PT_MODEL_COMM >= PT_COMM_LEN + 1, "a model's process name holds the kernel's");

/* parktrace's own CPU time so far (every thread, user and system). */
static uint64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void collector_init(struct collector *c, struct tracer *t, struct pt_services *sv, struct stacks *stacks,
                    struct jvm_tracker *jvm, const struct pt_options *o)
{
    memset(c, 0, sizeof(*c));
    c->t = t;
    c->sv = sv;
    c->stacks = stacks;
    c->jvm = jvm;
    c->o = o;
    /* A pointer a slot: a record is allocated when its slot is first
     * named and freed when the slot goes back to the kernel, so records
     * follow the live blockers (512 B each calloc'd per slot stayed
     * resident up to the most slots ever taken: 12 MiB on a soak). */
    c->b = calloc(t->nslots, sizeof(*c->b));
    c->retiring = calloc(t->nslots, sizeof(*c->retiring));
    c->retiring_since = calloc(t->nslots, sizeof(*c->retiring_since));
    if (!c->b || !c->retiring || !c->retiring_since) {
        fprintf(stderr, "parktrace: out of memory for the blocker table\n");
        exit(1);
    }
    c->start_ns = c->window_start = monotonic_ns();
    clock_gettime(CLOCK_REALTIME, &c->start_wall);
    c->window_wall = c->start_wall;
    c->cpu_start_ns = c->cpu_window_ns = process_cpu_ns();
    tracer_set_run_start(t, c->start_ns);
    c->kernel = stack_maps_of(t);
    struct proc_lives lives = proc_lives_of(t);
    csp_init(&c->csp, &lives, c->start_ns);
}

static bool slot_valid(const struct pt_slot *s)
{
    return __atomic_load_n(&s->valid, __ATOMIC_ACQUIRE) != 0;
}

/* Names a blocker: process, global variable, first stack, class and role.
 * Retried while the first stack has not been unwound yet. */
/* Slot IDX's record, allocated at its first use. */
static struct blocker *record(struct collector *c, uint32_t idx)
{
    if (!c->b[idx] && !(c->b[idx] = calloc(1, sizeof(struct blocker)))) {
        fprintf(stderr, "parktrace: out of memory for the blocker table\n");
        exit(1);
    }
    return c->b[idx];
}

/* Frees slot IDX's record, if it has one. */
static void free_record(struct collector *c, uint32_t idx)
{
    struct blocker *b = c->b[idx];
    if (!b)
        return;
    free(b->name);
    free(b->java_class);
    free(b);
    c->b[idx] = NULL;
}

/* Whether ST's Java frames were walked before its JVM was known: flagged
 * so by the kernel, or an interpreted frame named without its method. */
static bool walked_blind(const struct pt_stack *st)
{
    if (st->blind)
        return true;
    for (int i = 0; i < st->n; i++)
        if (st->frames[i].name &&
            (strcmp(st->frames[i].name, "[Interpreter]") == 0 || strcmp(st->frames[i].name, "[interpreted]") == 0))
            return true;
    return false;
}

static void resolve(struct collector *c, uint32_t idx)
{
    struct blocker *b = record(c, idx);
    const struct pt_slot *s = &c->t->slots[idx];

    if (b->resolved)
        return;
    if (!b->tries) {
        b->pid = s->key.kind & PT_KEY_SHARED ? (int)s->first_tgid : (int)s->key.owner;
        struct pm_proc *p = procmaps_get(c->sv->maps, b->pid);
        memcpy(b->thread, s->first_comm, PT_COMM_LEN);
        snprintf(b->comm, sizeof(b->comm), "%s", p->comm[0] ? p->comm : b->thread);
        if ((s->key.kind & 0xff) == PT_KIND_FUTEX)
            b->name = symbolize_data(c->sv->maps, (int)s->first_tgid, s->first_uaddr);
    }
    b->tries++;
    /* While a first stack asked for again has not come, the old one stays. */
    if (s->first_stack >= 0 || !b->first_stack)
        b->first_stack = stacks_resolve(c->stacks, idx, (int)s->first_tgid, s->first_stack);
    bool named = true;
    uint32_t kind = s->key.kind & 0xff;
    if (kind != PT_KIND_FUTEX) {
        /* The kernel publishes a slot a moment before its class: retried.
         * Once named, its role stays; the superclasses are needed only for
         * that (768 bytes a slot kept them, 24 MiB over a full table). */
        if (!b->java_class) {
            char cls[256] = "", supers[512] = "";
            if (!s->key.addr)
                snprintf(cls, sizeof(cls), "<no blocker>");
            else if (!jvm_tracker_class(c->jvm, b->pid, s->klass, cls, sizeof(cls), supers, sizeof(supers)))
                cls[0] = '\0';
            if (cls[0] && !(b->java_class = strdup(cls))) {
                fprintf(stderr, "parktrace: out of memory for class names\n");
                exit(1);
            }
            classify_java(b->java_class ? b->java_class : "<unknown class>", supers, &b->cls);
            /* Any object can be a monitor: the kind, not the class, gives the role. */
            if (kind == PT_KIND_JVM_MONITOR)
                b->cls.wait = false;
            else if (kind == PT_KIND_JVM_WAIT)
                b->cls.wait = true;
        }
        named = b->java_class != NULL;
    } else {
        classify_futex(b->first_stack, &b->cls);
    }
    classify_override(c->o, b->cls.cls, &b->cls.wait);
    /* The first stack arrives with the first waiter's first completed wait. */
    if (s->first_stack < 0)
        b->tries--;
    b->resolved = (b->first_stack->unwound && named) || b->tries >= MAX_RESOLVE_TRIES;
    /* A first stack cut short, as a JVM's first walks are before its unwind
     * tables come, or a Java blocker's walked before its JVM was known
     * (its interpreted frames unnamed: under load, a JVM found after its
     * first parks had their sites at Parker::park for good): the first
     * waiter's next wait gives another (the kernel sets first_stack while
     * it is -1), a few times at most. The row's site and whether it is
     * idle housekeeping are read off it. */
    bool blind = kind != PT_KIND_FUTEX && named && walked_blind(b->first_stack) &&
                 b->blind_restacks < MAX_BLIND_RESTACKS;
    if (b->resolved && s->first_stack >= 0 &&
        (blind || (b->first_stack->truncated && b->restacks < MAX_RESTACKS))) {
        if (blind)
            b->blind_restacks++;
        else
            b->restacks++;
        b->resolved = false;
        ((struct pt_slot *)s)->first_stack = -1;
    }
}

struct blocker *collector_blocker(struct collector *c, uint32_t idx)
{
    if (idx >= tracer_used_slots(c->t) || !slot_valid(&c->t->slots[idx]))
        return NULL;
    resolve(c, idx);
    return c->b[idx];
}

static void recycle(struct collector *c, uint64_t now);

static void note_max(uint64_t *max, uint64_t v)
{
    if (v > *max)
        *max = v;
}

/* A part of the loop that took NS: its longest for --self-stats, and with
 * it a line on stderr when it was long enough to hold recycling up (the
 * time of day, to line up with a soak's reports). */
#define SLOW_PART_NS 250000000ULL
static void note_slow(const struct collector *c, uint64_t *max, const char *part, uint64_t ns)
{
    note_max(max, ns);
    if (!c->o->self_stats || ns < SLOW_PART_NS)
        return;
    struct timespec wall;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &wall);
    gmtime_r(&wall.tv_sec, &tm);
    fprintf(stderr, "parktrace: self-stats: %02d:%02d:%02d.%03ld UTC %s took %.1f ms\n", tm.tm_hour, tm.tm_min,
            tm.tm_sec, wall.tv_nsec / 1000000, part, (double)ns / 1e6);
}
#define RECYCLE_LATE_NS 200000000ULL
#define RECYCLE_DUE_NS 50000000ULL     /* the loop's tick */

/* Takes slot I's blocker out of the kernel's index: a new wait on it
 * starts a new blocker, and the slot is retired once the CPUs that found
 * it before are surely done with it (recycle). */
static void unpublish(struct collector *c, uint32_t i, uint64_t now)
{
    struct pt_slot *s = &c->t->slots[i];
    /* Valid 2 first: a thread whose last wait was on this slot takes it
     * again without the index only while it is 1 (last_slot). */
    __atomic_store_n(&s->valid, 2, __ATOMIC_RELEASE);
    if (slot_table_unpublish(c->t, &s->key)) {
        c->retiring[i] = 1;
        c->retiring_since[i] = now;
    } else {
        __atomic_store_n(&s->valid, 1, __ATOMIC_RELEASE);
    }
}
#define NAMING_BUDGET_NS 50000000ULL   /* of a tick's time, for new blockers */

/* The stack cache's entries of processes that have exited and that no live
 * blocker names any more: they would grow with every process a machine
 * starts. Looked for once a second for DEAD_REAPED_NS after the kernel
 * counts an exit, and every DEAD_SCAN_NS in any case. */
#define FORGET_EVERY_NS 1000000000ULL
#define DEAD_SCAN_NS 10000000000ULL
#define DEAD_REAPED_NS 5000000000ULL

static void forget_dead_processes(struct collector *c, uint64_t now)
{
    if (now - c->forgot_ns < FORGET_EVERY_NS)
        return;
    c->forgot_ns = now;
    procmaps_forget_exited(c->sv->maps, now);
    csp_forget_exited(&c->csp, now);
    stacks_trim_templates(c->stacks, now);
    /* The cache's processes are looked through (a walk of every stack)
     * only for a while after a process has exited (until its parent has
     * reaped it, it still answers kill), or every DEAD_SCAN_NS should an
     * exit have been missed. */
    uint64_t exits = slot_table_process_exits(c->t);
    if (exits != c->exits_seen) {
        c->exits_seen = exits;
        c->dead_until_ns = now + DEAD_REAPED_NS;
    }
    if (now >= c->dead_until_ns && now - c->dead_scan_ns < DEAD_SCAN_NS)
        return;
    c->dead_scan_ns = now;
    int dead[64];
    bool named[64] = {false};
    int n = stacks_dead_processes(c->stacks, dead, 64);
    /* 64 at most a pass: the rest at the next second's. */
    if (n == 64)
        c->dead_until_ns = now + FORGET_EVERY_NS;
    if (!n)
        return;
    uint32_t used = tracer_used_slots(c->t);
    for (uint32_t i = 0; i < used; i++) {
        struct pt_slot *s = &c->t->slots[i];
        if (!slot_valid(s) && !c->retiring[i])
            continue;
        for (int j = 0; j < n; j++) {
            if (dead[j] != (int)s->first_tgid && !(c->b[i] && dead[j] == c->b[i]->pid))
                continue;
            named[j] = true;
            /* A blocker of an exited process waits for no one any more: it
             * leaves now, whatever room the table has, and its stacks with
             * it (a machine that starts JVMs all day kept every one's
             * blockers and stacks until the table filled). A shared futex
             * lives on in other processes. */
            if (!c->retiring[i] && slot_valid(s) && !(s->key.kind & PT_KEY_SHARED) &&
                __atomic_load_n(&s->parked_now, __ATOMIC_ACQUIRE) == 0)
                unpublish(c, i, now);
        }
    }
    for (int j = 0; j < n; j++)
        if (!named[j]) {
            stacks_forget_process(c->stacks, dead[j]);
            jvm_tracker_process_gone(c->jvm, dead[j]);
        }
}

/* The heap's free pages go back to the system every TRIM_EVERY_NS: what a
 * burst of recycled blockers' naming freed stayed resident for good (in
 * 12 minutes of a soak, live allocations flat, the heap's resident pages
 * 37 -> 54 MiB). */
#define TRIM_EVERY_NS 10000000000ULL

static void trim_heap(struct collector *c, uint64_t now)
{
    if (now - c->trimmed_ns < TRIM_EVERY_NS)
        return;
    c->trimmed_ns = now;
    malloc_trim(0);
}

static bool process_alive(int pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* What recycled blockers' sites and stacks may take (--recycled-budget)
 * before those of exited processes are folded together: a machine that
 * starts processes all day would otherwise keep every one's. */
static void keep_retired_in_budget(struct collector *c)
{
    uint64_t bytes = retired_bytes(&c->retired);
    if (bytes <= c->o->recycled_budget || bytes <= c->refold_bytes)
        return;
    retired_fold(&c->retired, process_alive, RETIRED_EXITED_SHAPES);
    /* Still over three quarters of it: exited processes keep their totals
     * per kind and class, not their commands, sites and frames. */
    if (retired_bytes(&c->retired) > c->o->recycled_budget / 4 * 3)
        retired_fold(&c->retired, process_alive, RETIRED_EXITED);
    /* Still over it: live processes' sites go the same way (a process
     * making blockers at ever new sites, kept whole, grew without bound). */
    if (retired_bytes(&c->retired) > c->o->recycled_budget)
        retired_fold(&c->retired, process_alive, RETIRED_ALL);
    /* Live processes' sites alone over it: not again before they grow by a
     * quarter (each fold rebuilds them all). */
    c->refold_bytes = retired_bytes(&c->retired) / 4 * 5;
}

void collector_tick(struct collector *c)
{
    uint64_t now = monotonic_ns();
    /* First, so that the kernel's table has room whatever the rest costs. */
    recycle(c, now);
    uint64_t t1 = monotonic_ns();
    /* Recycling again between slow parts: each has taken a few hundred ms
     * on a loaded machine, and the table fills at 26 000 blockers a second. */
    forget_dead_processes(c, now);
    uint64_t recycled_ns = collector_recycle_due(c);
    keep_retired_in_budget(c);
    trim_heap(c, now);
    recycled_ns += collector_recycle_due(c);
    jvm_tracker_tick(c->jvm);
    uint64_t t2 = monotonic_ns();
    note_slow(c, &c->slow.recycle_ns, "recycling", t1 - now);
    note_slow(c, &c->slow.jvm_ns, "housekeeping (exited processes, JVMs)", t2 - t1 - recycled_ns);
    collector_recycle_due(c);
    collector_poll_samples(c);
    uint32_t n = tracer_used_slots(c->t);
    /* Slots are handed out in order and never taken back: only those past
     * the last one settled need a look (one still being published stops the
     * advance until its next tick). Naming thousands of new blockers (the
     * first ones read symbol files) is spread over ticks: a tick that has
     * spent its budget leaves the rest to the next. */
    uint64_t until = now + NAMING_BUDGET_NS;
    bool settled = true;
    for (uint32_t i = c->settled; i < n; i++) {
        if ((i & 63) == 63 && monotonic_ns() > until)
            break;
        if (!slot_valid(&c->t->slots[i])) {
            settled = false;
            continue;
        }
        resolve(c, i);
        /* Its process's alive time is counted while it lives. */
        if (!c->b[i]->watched) {
            csp_watch(&c->csp, c->b[i]->pid, now);
            c->b[i]->watched = true;
        }
        if (settled)
            c->settled = i + 1;
    }
}

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
static void snapshot(const struct pt_slot *s, uint64_t now, int hist_slots, struct pt_counters *out)
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

/* Reads every valid slot below NUSED into C->reads, at most ROOM, and
 * returns how many. All are read before any row is named (naming a new
 * blocker can read symbol files for milliseconds, more on a loaded CPU):
 * read one by one between namings, a JVM's waits under way were counted
 * milliseconds past NOW, where its threads' life stops, and a starting
 * JVM waited 7% longer than its threads lived in one 100 ms window. */
static uint32_t read_slots(struct collector *c, uint32_t nused, uint32_t room, uint64_t now)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < nused && n < room; i++) {
        const struct pt_slot *s = &c->t->slots[i];
        if (!slot_valid(s))
            continue;
        struct slot_read *rd = &c->reads[n++];
        rd->slot = i;
        /* A slot above the longest wait so far has never been counted in:
         * at 10 000 blockers a second, the histograms were most of the
         * memory a report read and wrote. The maximum is raised before
         * the slot is counted, and a count missed as it is raised stays
         * in the next window (PREV keeps the slot's older count). */
        rd->hist_slots = metrics_hist_used(__atomic_load_n(&s->max_ns, __ATOMIC_ACQUIRE));
        snapshot(s, now, rd->hist_slots, &rd->cur);
    }
    return n;
}

/* Makes the reused buffers hold N rows. */
static void *realloc_or_die(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "parktrace: out of memory for %zu bytes of report rows\n", n);
        exit(1);
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
    c->rows = realloc_or_die(c->rows, cap * sizeof(*c->rows));
    c->reads = realloc_or_die(c->reads, cap * sizeof(*c->reads));
    c->sorted = realloc_or_die(c->sorted, cap * sizeof(*c->sorted));
    c->order = realloc_or_die(c->order, cap * sizeof(*c->order));
    c->rows_cap = cap;
}

/* The waker table's top entry per slot, for the slots ever handed out. */
static void reserve_top(struct collector *c, uint32_t nused)
{
    if (nused > c->top_cap) {
        c->top = realloc_or_die(c->top, (size_t)nused * sizeof(*c->top));
        c->top_cap = nused;
    }
}

/* Thread time per process in the window: its waits, or its wait-role
 * (idle) waits. Rows of one process mostly come together: the last one
 * added is looked at first. */
struct pid_sums {
    struct { int pid; uint64_t ns; } *v;
    int n, cap, last;
};

static void pid_sum_add(struct pid_sums *l, int pid, uint64_t ns)
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
        l->v = realloc_or_die(l->v, (size_t)l->cap * sizeof(*l->v));
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

/* One interval's CSP of B's lock (ROW; none, that is 0, when NULL) for its
 * phases. */
static void feed_phase(struct collector *c, struct blocker *b, const struct pt_row *row, struct timespec win)
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

/* CSP for every lock-role row; in interval reports, phases too. */
static void apply_csp(struct collector *c, struct pt_model *r, const struct pid_sums *idle, uint64_t now,
                      bool interval)
{
    struct timespec win = interval ? c->window_wall : c->start_wall;
    for (int i = 0; i < r->nrows; i++) {
        struct pt_row *row = &r->rows[i];
        uint64_t alive, idle_ns;
        if (row->wait || !process_time(c, idle, row->pid, now, interval, &alive, &idle_ns))
            continue;
        row->has_csp = csp_value(row->fig.thread_time_ns, alive, idle_ns, &row->csp);
        if (!interval || !row->has_csp || row->src == UINT32_MAX)
            continue;
        struct blocker *b = record(c, row->src);
        feed_phase(c, b, row, win);
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
            feed_phase(c, b, NULL, win);
        b->phase_seen = false;
    }
    for (int i = 0; i < r->nrows; i++)
        r->rows[i].in_phase = r->rows[i].src != UINT32_MAX && record(c, r->rows[i].src)->phase != 0;
}

/* The name of process TGID for a stack of blocker B's, copied into OUT;
 * returns the process's owner. */
static uint32_t comm_of(struct collector *c, int tgid, const struct blocker *b, char out[PT_MODEL_COMM])
{
    struct pm_proc *p = procmaps_get(c->sv->maps, tgid);
    snprintf(out, PT_MODEL_COMM, "%s", p->comm[0] ? p->comm : b->comm);
    return p->uid;
}

/* Who the stacks of blocker B (slot SLOT) wait on, for the labelled outputs. */
static void stack_blocker(struct collector *c, uint32_t slot, const struct blocker *b, struct pt_model_stack *ms)
{
    const struct pt_slot *s = &c->t->slots[slot];
    int kind = s->key.kind & 0xff;
    ms->pid = b->pid;
    ms->kind = pt_kind_names[kind];
    ms->wait = b->cls.wait;
    ms->name = b->name;
    snprintf(ms->id, sizeof(ms->id), "0x%llx",
             (unsigned long long)(kind == PT_KIND_FUTEX ? s->first_uaddr : s->key.addr));
}

/* The waits with a known waker of one (blocker, process, waiter stack),
 * summed over its wakers. */
struct woken_sum {
    uint32_t slot, tgid;
    int32_t stack_id;
    uint64_t count, ns;
};

static int by_waiter(const void *a, const void *b)
{
    const struct woken_sum *x = a, *y = b;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    if (x->tgid != y->tgid)
        return x->tgid < y->tgid ? -1 : 1;
    return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

/* W's entries summed per waiter stack and sorted, so that each of tens of
 * thousands of stacks finds its own by bisection; *N of them. */
static struct woken_sum *woken_sums(const struct wakers *w, int *n)
{
    struct woken_sum *s = malloc((size_t)(w->n ? w->n : 1) * sizeof(*s));
    if (!s) {
        fprintf(stderr, "parktrace: out of memory for the waker table\n");
        exit(1);
    }
    for (int i = 0; i < w->n; i++)
        s[i] = (struct woken_sum){w->e[i].k.slot, w->e[i].k.tgid, w->e[i].k.stack_id, w->e[i].line_count,
                                  w->e[i].line_ns};
    qsort(s, (size_t)w->n, sizeof(*s), by_waiter);
    int m = 0;
    for (int i = 0; i < w->n; i++) {
        if (m && by_waiter(&s[m - 1], &s[i]) == 0) {
            s[m - 1].count += s[i].count;
            s[m - 1].ns += s[i].ns;
        } else {
            s[m++] = s[i];
        }
    }
    *n = m;
    return s;
}

/* The model's stacks: each waiter stack with its own waits (no waker seen)
 * and all of them (its waits with a known waker, which the kernel charges
 * to the (waiter, waker) pair instead, added back); with MODEL_WAKERS the
 * pairs too, in the waker table's order. */
/* Whether entry (SLOT, TGID, STACK_ID) is SLOT's first waiter's stack. */
static bool first_stack_entry(const struct collector *c, uint32_t slot, uint32_t tgid, int32_t stack_id)
{
    const struct pt_slot *s = &c->t->slots[slot];
    return s->first_stack == stack_id && s->first_tgid == tgid;
}

static void model_stacks(struct collector *c, struct pt_model *m, const struct wakers *w, bool pairs)
{
    struct map_dump st = {0};
    m->has_stacks = true;
    m->has_wakers = pairs;
    /* The kernel's table of wait time per (blocker, process, waiter stack),
     * in its own order. */
    stack_maps_dump(&c->kernel, STACK_TIMES_WAITER, &st);
    struct stack_weights *sw = NULL;
    /* Read after the dumps, so every slot in them is below it (and
     * mapped); the slots past it were never handed out, and reading them
     * too cost a pass over the whole table at every report. */
    uint32_t used = tracer_used_slots(c->t);
    if (c->t->stacks_sampled && stack_weights_begin(&c->weights, used) == 0) {
        sw = &c->weights;
        for (int i = 0; i < w->n; i++)
            stack_weights_add(sw, w->e[i].k.slot, &(struct pt_stack_val){w->e[i].line_count, w->e[i].line_ns});
        for (uint32_t i = 0; i < st.n; i++)
            stack_weights_add(sw, ((const struct pt_stack_key *)st.keys)[i].slot, (const struct pt_stack_val *)st.vals + i);
        stack_weights_end(sw, c->t->slots, used, NULL, NULL);
        m->totals.stack_time_ns = sw->sampled_ns + sw->unsampled_ns + c->retired_sampled_ns + c->retired_unsampled_ns;
        m->totals.stack_unsampled_ns = sw->unsampled_ns + c->retired_unsampled_ns;
    }
    for (int i = 0; pairs && i < w->n; i++) {
        const struct pt_waker_key *k = &w->e[i].k;
        struct blocker *b = collector_blocker(c, k->slot);
        if (!b)
            continue;
        struct pt_stack_val v = {w->e[i].count, w->e[i].ns};
        if (sw)
            v = stack_weights_apply(sw, k->slot, &v, false, &c->t->slots[k->slot]);
        struct pt_model_waker *mw = model_add_waker(m);
        comm_of(c, (int)k->tgid, b, mw->root);
        mw->stack = stacks_resolve(c->stacks, k->slot, (int)k->tgid, k->stack_id);
        mw->leaf = b->cls.cls;
        mw->waker = stacks_resolve(c->stacks, k->slot, (int)k->waker_tgid, k->waker_stack);
        comm_of(c, (int)k->waker_tgid, b, mw->waker_root);
        mw->count = v.count;
        mw->ns = v.ns;
        struct pt_model_stack labels;
        stack_blocker(c, k->slot, b, &labels);
        mw->pid = labels.pid;
        mw->kind = labels.kind;
        mw->wait = labels.wait;
        mw->name = labels.name;
        memcpy(mw->id, labels.id, sizeof(mw->id));
    }
    int nsums;
    struct woken_sum *sums = woken_sums(w, &nsums);
    for (uint32_t i = 0; i < st.n; i++) {
        const struct pt_stack_key *key = (const struct pt_stack_key *)st.keys + i;
        struct pt_stack_val own = ((const struct pt_stack_val *)st.vals)[i], all = own;
        const struct woken_sum want = {key->slot, key->tgid, key->stack_id, 0, 0};
        const struct woken_sum *woken = bsearch(&want, sums, (size_t)nsums, sizeof(*sums), by_waiter);
        if (woken) {
            all.count += woken->count;
            all.ns += woken->ns;
        }
        if (sw && key->slot < used) {
            bool first = first_stack_entry(c, key->slot, key->tgid, key->stack_id);
            const struct pt_slot *s = &c->t->slots[key->slot];
            all = stack_weights_apply(sw, key->slot, &all, first, s);
            own = stack_weights_apply(sw, key->slot, &own, first, s);
        }
        struct blocker *b = all.count ? collector_blocker(c, key->slot) : NULL;
        if (!b)
            continue;
        struct pt_model_stack *ms = model_add_stack(m);
        ms->uid = comm_of(c, (int)key->tgid, b, ms->root);
        ms->stack = stacks_resolve(c->stacks, key->slot, (int)key->tgid, key->stack_id);
        ms->leaf = b->cls.cls;
        stack_blocker(c, key->slot, b, ms);
        ms->count = all.count;
        ms->ns = all.ns;
        ms->own_count = own.count;
        ms->own_ns = own.ns;
    }
    free(sums);
    map_dump_free(&st);
    for (int i = 0; i < c->retired.nstacks; i++)
        *model_add_stack(m) = c->retired.stacks[i];
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
static const char *blocker_top_frame(struct blocker *b)
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
static bool blocker_idle(struct collector *c, struct blocker *b, const struct pt_slot *s)
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
    if (!b->cls.wait)
        return b->idle & PT_IDLE_RUNTIME;
    return (b->idle & PT_IDLE_WAIT) || (strcmp(b->cls.cls ? b->cls.cls : "futex", "futex") != 0 && unwoken(s));
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

/* R's processes with a known alive time: their working and idle thread
 * time in the window (JSON `processes`). */
static void model_processes(struct collector *c, struct pt_model *r, const struct pid_sums *idle,
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
        p->idle_ns = idle_ns;
        p->working_ns = alive - idle_ns;
        p->lived_ns = alive;
        p->thread_time_ns = pid_sum_of(waited, pid);
    }
}

/* ---- Recycling slots (metrics.md, "Blockers that come and go") ----------
 * Once the kernel's table is half full, a blocker with no waiter that has
 * been idle a while leaves it: first its key is unpublished (new
 * waits on it take a new slot), then, a grace period later and still with
 * no waiter, what it counted goes to its site in c->retired, its entries in
 * the stack, waker, thread and sample tables go (their stacks to the
 * retired ones), and its zeroed slot goes back to the kernel's free_slots. */
/* Blockers leave only as the table fills: those with no event for 2 s once
 * a quarter of it is taken, for 100 ms once half is. 100 ms is short
 * enough that a server making 15 000 lock objects a second (a tick is
 * 200 ms) never fills the table; 2 s keeps a lock used every second one
 * blocker, one row, instead of a new slot (and its naming) each time. A
 * blocker used again after it left starts a new slot, its figures joining
 * its site. */
/* Idle for this long, a blocker leaves once the table is 1/2, 3/8 or 1/8
 * taken: the busier the table, the sooner. A machine busy enough to keep
 * parktrace off the CPU for a few hundred milliseconds must not find the
 * table full: at 26 000 new blockers a second (a soak's ZooKeeper clients
 * and churn at once) and only 1/2-idle-100 ms, it dropped waits. The middle
 * step is at 3/8, not 1/4: 10 000 blockers each used twice a second (a
 * quarter of the default table) left and came back, over and over. */
#define RECYCLE_HOT_NS 20000000ULL      /* table 1/2 taken */
#define RECYCLE_IDLE_NS 100000000ULL    /* table 3/8 taken */
#define RECYCLE_COLD_NS 2000000000ULL   /* table 1/8 taken */
#define RECYCLE_GRACE_NS 50000000ULL    /* unpublished for this long */
/* Below 3/8 taken, with no slot waiting for its grace, the slots are read
 * this often rather than at every tick: a blocker leaves there after 2 s
 * idle, and reading 10 000 slots twenty times a second was a third of
 * parktrace's CPU with that many live (issue 16, item 5). From 3/8 to
 * 1/2 in 250 ms is 16 000 new blockers a second. While fewer than 3/8 of
 * the slots were ever handed out, no more than that can be taken, so the
 * table cannot need a faster mode before the tick that sees it: once a
 * second will do (five scans a second of 10 000 live blockers were a
 * tenth of parktrace's CPU). */
#define RECYCLE_SCAN_COLD_NS 250000000ULL
#define RECYCLE_SCAN_SPARSE_NS 1000000000ULL

/* A retiring blocker's class, as its row says it (one not named yet: futex). */
static const char *retiring_class(const struct blocker *b)
{
    return b->cls.cls ? b->cls.cls : "futex";
}

/* Slot I's blocker as a member of its retired site (figures aside). */
static struct retired_member member_of(struct collector *c, uint32_t i)
{
    const struct pt_slot *s = &c->t->slots[i];
    resolve(c, i);
    struct blocker *b = c->b[i];
    return (struct retired_member){
        .pid = b->pid,
        .kind = pt_kind_names[s->key.kind & 0xff],
        .cls = retiring_class(b),
        .site = blocker_top_frame(b),
        .comm = b->comm,
        .thread = b->thread,
        .wait = b->cls.wait,
        .idle = blocker_idle(c, b, s),
        .first_stack = b->first_stack,
        .prev = b->prev,
        .whole = {s->peak, s->max_ns, s->threads, s->first_ts, s->last_ts},
        .win = {s->peak_win, s->max_win_ns, s->threads_win, s->win_first_ts, s->last_ts},
    };
}

static void retire_member(struct collector *c, uint32_t i, uint64_t now)
{
    struct retired_member m = member_of(c, i);
    snapshot(&c->t->slots[i], now, PT_HIST_SLOTS, &m.final);
    retired_add(&c->retired, &m);
}

/* Keeps the entries of D (KEY_SIZE and VAL_SIZE bytes, the key's slot
 * first) whose slot is being retired; the others are not touched. */
static void keep_retiring(const struct collector *c, struct map_dump *d, size_t key_size, size_t val_size)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        const char *key = (const char *)d->keys + (size_t)i * key_size;
        uint32_t slot;
        memcpy(&slot, key, sizeof(slot));
        if (slot >= c->t->nslots || c->retiring[slot] != 2)
            continue;
        if (kept != i) {
            memcpy((char *)d->keys + (size_t)kept * key_size, key, key_size);
            memcpy((char *)d->vals + (size_t)kept * val_size, (const char *)d->vals + (size_t)i * val_size, val_size);
        }
        kept++;
    }
    d->n = kept;
}

static bool slot_retiring(void *ctx, uint32_t slot)
{
    const struct collector *c = ctx;
    return slot < c->t->nslots && c->retiring[slot] == 2;
}

/* One stack_time or waker_time entry of a retiring slot, VAL its weights
 * (scaled by SW, for sampled stacks): to the retired stacks, OWN when no
 * waker was seen for them. */
static void retire_stack(struct collector *c, uint32_t slot, uint32_t tgid, int32_t stack_id,
                         const struct pt_stack_val *raw, bool own, const struct stack_weights *sw)
{
    struct pt_stack_val v = sw ? stack_weights_apply(sw, slot, raw, first_stack_entry(c, slot, tgid, stack_id),
                                                     &c->t->slots[slot])
                               : *raw;
    if (!v.count)
        return;
    const struct blocker *b = record(c, slot);
    char root[PT_MODEL_COMM];
    uint32_t uid = comm_of(c, (int)tgid, b, root);
    struct pt_model_stack who = {.leaf = retiring_class(b)};
    stack_blocker(c, slot, b, &who);
    who.uid = uid;
    retired_add_stack(&c->retired, root, stacks_resolve(c->stacks, slot, (int)tgid, stack_id), &who,
                      v.count, v.ns, own ? v.count : 0, own ? v.ns : 0);
}

_Static_assert(offsetof(struct pt_waker_key, slot) == offsetof(struct pt_stack_key, slot) &&
                   offsetof(struct pt_waker_key, stack_id) == offsetof(struct pt_stack_key, stack_id) &&
                   offsetof(struct pt_waker_key, tgid) == offsetof(struct pt_stack_key, tgid),
               "a waker key starts as a stack key");

/* The (slot, waiter stack, process) an entry of D starts with. */
static struct pt_stack_key entry_key(const struct map_dump *d, size_t key_size, uint32_t i)
{
    struct pt_stack_key k;
    memcpy(&k, (const char *)d->keys + (size_t)i * key_size, offsetof(struct pt_stack_key, pad));
    return k;
}

/* A retiring slot's (waiter, waker) entry: its waker to the site's tally
 * (metrics.md, "The waker on every contended row": a site of thousands
 * of short-lived objects, each waited on a few times, names who ends its
 * waits as a long-lived lock does). */
static void retire_waker(struct collector *c, const struct pt_waker_key *k, const struct pt_waker_val *v)
{
    if (!v->count || k->waker_stack < 0)
        return;
    struct retired_member m = member_of(c, k->slot);
    const struct pt_stack *st = stacks_resolve(c->stacks, k->slot, (int)k->waker_tgid, k->waker_stack);
    if (!st || !st->n)
        return;
    char comm[PT_MODEL_COMM];
    comm_of(c, (int)k->waker_tgid, c->b[k->slot], comm);
    retired_add_waker(&c->retired, &m, st, comm, v->count, v->ns);
}

/* Reads table WHICH whole and keeps the entries of the retiring slots in D. */
static void read_retiring(struct collector *c, enum stack_times which, size_t key_size, size_t val_size,
                          struct map_dump *d)
{
    stack_maps_dump(&c->kernel, which, d);
    keep_retiring(c, d, key_size, val_size);
}

/* Hands the retiring slots' waiter stacks (with their waits that had a
 * known waker) to the retired ones, scaled when sampled, and deletes their
 * entries in stack_time and waker_time. */
/* Entry I of D (of table T: 0 stack_time, 1 waker_time) as its waiter's
 * line weighs it. */
static struct pt_stack_val line_val(const struct map_dump *d, int t, uint32_t i)
{
    if (!t)
        return ((const struct pt_stack_val *)d->vals)[i];
    const struct pt_waker_val *v = (const struct pt_waker_val *)d->vals + i;
    return (struct pt_stack_val){v->line_count, v->line_ns};
}

static void retire_stacks(struct collector *c)
{
    struct map_dump *own = &c->scratch, *woken = &c->scratch2;
    const size_t vsz[2] = {sizeof(struct pt_stack_val), sizeof(struct pt_waker_val)};
    const size_t ksz[2] = {sizeof(struct pt_stack_key), sizeof(struct pt_waker_key)};
    struct map_dump *d[2] = {own, woken};
    const enum stack_times which[2] = {STACK_TIMES_WAITER, STACK_TIMES_WAKER};
    for (int t = 0; t < 2; t++)
        read_retiring(c, which[t], ksz[t], vsz[t], d[t]);
    struct stack_weights *sw = NULL;
    uint32_t used = tracer_used_slots(c->t);   /* after the dumps, as in model_stacks */
    if (c->t->stacks_sampled && stack_weights_begin(&c->weights, used) == 0) {
        sw = &c->weights;
        for (int t = 0; t < 2; t++)
            for (uint32_t i = 0; i < d[t]->n; i++) {
                struct pt_stack_val v = line_val(d[t], t, i);
                stack_weights_add(sw, entry_key(d[t], ksz[t], i).slot, &v);
            }
        stack_weights_end(sw, c->t->slots, used, slot_retiring, c);
        c->retired_sampled_ns += sw->sampled_ns;
        c->retired_unsampled_ns += sw->unsampled_ns;
    }
    for (int t = 0; t < 2; t++) {
        for (uint32_t i = 0; i < d[t]->n; i++) {
            struct pt_stack_key k = entry_key(d[t], ksz[t], i);
            struct pt_stack_val v = line_val(d[t], t, i);
            retire_stack(c, k.slot, k.tgid, k.stack_id, &v, t == 0, sw);
            if (t == 1)
                retire_waker(c, (const struct pt_waker_key *)d[t]->keys + i,
                             (const struct pt_waker_val *)d[t]->vals + i);
        }
        stack_maps_delete(&c->kernel, which[t], d[t]->keys, d[t]->n);
    }
}

/* Moves the retiring slots' waiter stacks (with their waits that had a
 * known waker) to the retired ones, and deletes their table entries. */
static void retire_entries(struct collector *c)
{
    retire_stacks(c);
    /* thread_seen is left alone: its keys hold the slot's reuses, which
     * return_slots bumps, and its LRU lets the old ones go (reading it
     * whole was a third of a pass that took 454 ms in a soak). */

    /* Stack copies (8 KiB each) not yet unwound: a few at most, keys only,
     * deleted after the walk (a walk from a deleted key starts over). */
    struct pt_sample_key keys[PT_MAX_SAMPLES];
    int n = stack_maps_sample_keys(&c->kernel, keys, PT_MAX_SAMPLES);
    for (int i = 0; i < n; i++)
        if (keys[i].slot < c->t->nslots && c->retiring[keys[i].slot] == 2)
            stack_maps_drop_sample(&c->kernel, &keys[i]);
}

void collector_recycle(struct collector *c)
{
    recycle(c, monotonic_ns());
}

uint64_t collector_recycle_due(struct collector *c)
{
    uint64_t now = monotonic_ns();
    if (now - c->slow.last_recycle < RECYCLE_DUE_NS)
        return 0;
    recycle(c, now);
    return monotonic_ns() - now;
}

/* Stack copies are unwound in slices with recycling between them: a burst
 * of new processes' stacks took up to 984 ms in one go in an hour's soak,
 * while the blocker table, not recycled meanwhile, filled (6 404 waits
 * dropped). */
#define SAMPLES_SLICE_NS 50000000ULL
#define SAMPLES_SLICES 16

void collector_poll_samples(struct collector *c)
{
    for (int i = 0; i < SAMPLES_SLICES; i++) {
        uint64_t t = monotonic_ns();
        bool more = stacks_poll_samples(c->stacks, t + SAMPLES_SLICE_NS);
        note_slow(c, &c->slow.samples_ns, "a slice of stack copies", monotonic_ns() - t);
        collector_recycle_due(c);
        if (!more)
            break;
    }
}

/* Hands the slots folded into c->retired (state 2) back to the kernel,
 * once their entries in the stack, waker, thread and sample tables are
 * gone: those tables are read whole, so this runs at most every
 * ENTRIES_EVERY_NS while the table has room, for all such slots at once. */
#define ENTRIES_EVERY_NS 250000000ULL
/* While less than three quarters of the table is taken, at most this many
 * blockers fold at a tick, and their slots go back then:
 * a pass over 18 830 took 0.4 s on a loaded machine, the table filling
 * meanwhile (80 000 a second at a 50 ms tick is three times a soak's
 * churn). */
#define RECYCLE_BATCH 4096u

static void return_slots(struct collector *c, uint32_t n)
{
    uint64_t t1 = monotonic_ns();
    retire_entries(c);
    uint64_t t2 = monotonic_ns();
    stacks_forget_slots(c->stacks, slot_retiring, c);
    note_slow(c, &c->slow.entries_ns, "recycling's table entries", t2 - t1);
    note_slow(c, &c->slow.forget_ns, "recycling's stack cache", monotonic_ns() - t2);
    note_max(&c->slow.retired_max, c->folded);
    c->folded = 0;
    c->entries_ns = t1;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    for (uint32_t i = 0; i < n; i++) {
        if (c->retiring[i] != 2)
            continue;
        struct blocker *b = c->b[i];
        if (b && b->phase)
            feed_phase(c, b, NULL, wall);
        free_record(c, i);
        struct pt_slot *s = &c->t->slots[i];
        __atomic_store_n(&s->valid, 0, __ATOMIC_RELEASE);
        uint32_t reuses = s->reuses;
        memset(s, 0, sizeof(*s));
        s->reuses = reuses + 1;
        c->retiring[i] = 0;
        if (i < c->settled)
            c->settled = i;
        if (!slot_table_give_back(c->t, i))
            fprintf(stderr, "parktrace: cannot give slot %u back to the kernel\n", i);
    }
}

static void recycle(struct collector *c, uint64_t now)
{
    /* How late recycling ran (--self-stats): the table fills while it
     * does not. */
    if (c->slow.last_recycle && now - c->slow.last_recycle > RECYCLE_LATE_NS)
        c->slow.late++;
    if (c->slow.last_recycle)
        note_slow(c, &c->slow.gap_ns, "the gap between recyclings", now - c->slow.last_recycle);
    c->slow.last_recycle = now;
    uint32_t n = tracer_used_slots(c->t), nslots = c->t->nslots;
    /* By the slots taken at the last tick, live or on their way out: n,
     * the slots ever handed out, never falls, and once half the table had
     * been used every idle blocker left, over and over. */
    uint64_t idle_ns = c->occupied >= nslots / 2   ? RECYCLE_HOT_NS
                       : c->occupied >= nslots / 8 * 3 ? RECYCLE_IDLE_NS
                       : c->occupied >= nslots / 8 ? RECYCLE_COLD_NS
                                                   : 0;
    /* Blockers leave after 2 s idle, or not at all: a slower scan will do. */
    bool cold = !idle_ns || idle_ns == RECYCLE_COLD_NS;
    uint64_t every = n < nslots / 8 * 3 ? RECYCLE_SCAN_SPARSE_NS : RECYCLE_SCAN_COLD_NS;
    if (cold && !c->flush && !c->unpublished && now - c->scanned_ns < every) {
        if (c->folded && now - c->entries_ns >= ENTRIES_EVERY_NS)
            return_slots(c, n);
        return;
    }
    c->scanned_ns = now;
    uint32_t live = 0, occupied = 0, unpublished = 0;
    /* Three quarters taken, every blocker whose grace is over folds now,
     * however long the pass: a batch per tick is a ceiling on the slots
     * given back a second, and on a loaded machine, with ticks 0.7-1.1 s
     * apart, that was 4-6 000 a second against a churn of 26 000 (an
     * hour's soak filled the table, 7 289 waits dropped). */
    uint32_t batch = c->occupied >= nslots / 4 * 3 ? nslots : RECYCLE_BATCH;
    /* Twenty times a second over every slot: the first cache line of each
     * (valid, last_ts, parked_now) and the dense retiring[] only. */
    for (uint32_t i = 0; i < n; i++) {
        struct pt_slot *s = &c->t->slots[i];
        uint8_t state = c->retiring[i];
        if (state == 2) {
            occupied++;
            continue;
        }
        bool valid = slot_valid(s);
        occupied += state == 1 || valid;
        if (state == 1) {
            if (c->folded < batch && now - c->retiring_since[i] >= RECYCLE_GRACE_NS &&
                __atomic_load_n(&s->parked_now, __ATOMIC_ACQUIRE) == 0) {
                retire_member(c, i, now);
                c->retiring[i] = 2;
                c->folded++;
            } else {
                unpublished++;
            }
            continue;
        }
        if (!valid)
            continue;
        live++;
        uint64_t last = s->last_ts;
        if (idle_ns && last && last + idle_ns < now && __atomic_load_n(&s->parked_now, __ATOMIC_ACQUIRE) == 0) {
            unpublish(c, i, now);
            unpublished += c->retiring[i] == 1;
        }
    }
    c->live_blockers = live;
    c->occupied = occupied;
    c->unpublished = unpublished;
    note_slow(c, &c->slow.fold_ns, "recycling's scan and folds", monotonic_ns() - now);
    /* Folded slots go back together: at once when a report is due (its
     * rows must not count them twice) or the table is three quarters
     * taken, else every ENTRIES_EVERY_NS. */
    if (c->folded && (c->flush || c->folded >= batch || occupied >= nslots / 4 * 3 ||
                      now - c->entries_ns >= ENTRIES_EVERY_NS))
        return_slots(c, n);
    c->flush = false;
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
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    model_clear(r);
    r->type = type;
    r->wall = wall;
    uint32_t nused = tracer_used_slots(c->t);
    /* The tick's scan counted the slots taken (every valid one among
     * them); those published since have 256 rows (more wait for the next
     * report, their windows still open). */
    uint32_t room = c->occupied + (uint32_t)c->retired.n + 1 + 256;
    reserve_rows(c, room);
    reserve_top(c, nused);
    /* At most the rows left after the retired ones and the rest row. */
    const uint32_t nread = read_slots(c, nused, room - (uint32_t)c->retired.n - 1, now);
    r->rows = c->rows;
    r->window_ns = now - (interval ? c->window_start : c->start_ns);
    r->sees_fast_parks = c->o->probes == PT_PROBES_UPROBES;
    uint64_t cpu = process_cpu_ns();
    r->self_cpu_ns = cpu - (interval ? c->cpu_window_ns : c->cpu_start_ns);
    if (interval)
        c->cpu_window_ns = cpu;

    /* The whole run's figures are from zero (made once: 400 bytes). */
    const struct pt_counters zero = {.t = c->start_ns};
    struct pid_sums idle = {0}, waited = {0};
    struct wakers wk, raw = {0};
    struct waker_entry *top = c->top;
    wakers_read(&c->kernel, &wk);
    /* The stacks want the table as read; wakers_top reorders it. */
    if (what & MODEL_STACKS) {
        raw.n = wk.n;
        raw.e = malloc((size_t)(wk.n ? wk.n : 1) * sizeof(*raw.e));
        if (!raw.e) {
            fprintf(stderr, "parktrace: out of memory for the waker table\n");
            exit(1);
        }
        memcpy(raw.e, wk.e, (size_t)wk.n * sizeof(*raw.e));
    }
    wakers_top(&wk, c->stacks, nused, top);
    wakers_free(&wk);

    for (uint32_t k = 0; k < nread; k++) {
        const uint32_t i = c->reads[k].slot;
        const struct pt_slot *s = &c->t->slots[i];
        struct blocker *b = record(c, i);
        const struct pt_counters *cur = &c->reads[k].cur;
        const int hist_slots = c->reads[k].hist_slots;
        struct pt_window_extra extra;
        if (interval)
            extra = (struct pt_window_extra){s->peak_win, s->max_win_ns, s->threads_win,
                                             s->win_first_ts, s->last_ts};
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
            continue;
        r->totals.waits += row->fig.parks;
        r->totals.thread_time_ns += row->fig.thread_time_ns;
        r->totals.blockers++;
        resolve(c, i);
        note_join(c, b, i, &top[i]);
        /* Every wait is its process's, and every wait-role wait idle time
         * of it, printed or not. */
        pid_sum_add(&waited, b->pid, row->fig.thread_time_ns);
        if (b->cls.wait)
            pid_sum_add(&idle, b->pid, row->fig.thread_time_ns);
        if (cur->parks < c->o->print_threshold) {
            row->objects = 1;
            rest_add(&r->totals.rest, row);
            continue;
        }
        row->src = i;
        row->kind = pt_kind_names[s->key.kind & 0xff];
        row->pid = b->pid;
        row->comm = b->comm;
        /* A futex is its address; a Java blocker is its object. */
        row->id = (s->key.kind & 0xff) == PT_KIND_FUTEX ? s->first_uaddr : s->key.addr;
        row->name = b->name;
        row->cls = b->cls.cls;
        row->wait = b->cls.wait;
        row->first_thread = b->thread;
        row->first_stack = b->first_stack;
        row->top_frame = blocker_top_frame(b);
        row->objects = 1;
        row->idle = blocker_idle(c, b, s);
        if (top[i].count) {
            row->waker_stack = stacks_resolve(c->stacks, i, (int)top[i].k.waker_tgid, top[i].k.waker_stack);
            row->waker_top_frame = stacks_top_frame(row->waker_stack);
            snprintf(row->waker_comm, sizeof(row->waker_comm), "%s",
                     procmaps_get(c->sv->maps, (int)top[i].k.waker_tgid)->comm);
            row->waker_ns = top[i].ns;
            row->waker_wakeups = top[i].count;
        }
        r->nrows++;
    }
    int live_rows = r->nrows;
    r->nrows += retired_rows(&c->retired, interval, interval ? c->window_start : c->start_ns, now,
                             &r->rows[r->nrows], &r->totals.waits, &r->totals.blockers);
    /* A recycled blocker's wait-role waits stay idle time of its process
     * (a process that exited had its join waits recycled: CSP 10% low). */
    for (int k = live_rows; k < r->nrows; k++) {
        struct pt_row *row = &r->rows[k];
        if (row->waker_stack)
            row->waker_top_frame = stacks_top_frame(row->waker_stack);
        r->totals.thread_time_ns += row->fig.thread_time_ns;
        pid_sum_add(&waited, row->pid, row->fig.thread_time_ns);
        if (row->wait)
            pid_sum_add(&idle, row->pid, row->fig.thread_time_ns);
    }
    apply_csp(c, r, &idle, now, interval);
    model_processes(c, r, &idle, &waited, now, interval);
    free(idle.v);
    free(waited.v);
    if (interval) {
        roll_window(c, nused, now);
        retired_roll(&c->retired);
        csp_roll(&c->csp, now);
        c->window_start = now;
        c->window_wall = wall;
    }

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
        r->totals.stack_samples_lost = h.stack_samples_lost;
    }
    if (what & MODEL_STACKS) {
        model_stacks(c, r, &raw, what & MODEL_WAKERS);
        wakers_free(&raw);
    }
    return r;
}

void collector_free(struct collector *c)
{
    if (!c->t)
        return;     /* never made */
    for (uint32_t i = 0; i < c->t->nslots; i++)
        free_record(c, i);
    free(c->b);
    free(c->retiring);
    free(c->retiring_since);
    retired_free(&c->retired);
    map_dump_free(&c->scratch);
    map_dump_free(&c->scratch2);
    stack_weights_free(&c->weights);
    free(c->rows);
    free(c->reads);
    free(c->sorted);
    free(c->order);
    free(c->top);
    csp_free(&c->csp);
    phases_free(&c->phases);
    model_free(&c->model);
}

void collector_self_stats(const struct collector *c, FILE *f)
{
    struct mallinfo2 mi = mallinfo2();
    fprintf(f, "parktrace: self retired_sites=%d retired_stacks=%d retired_frames_kb=%" PRIu64
               " retired_kb=%" PRIu64 " retired_budget_kb=%" PRIu64 " retired_folds=%" PRIu64 " phases=%d heap_used_kb=%zu heap_free_kb=%zu heap_mmap_kb=%zu recycle_gap_max_ms=%.1f"
               " recycle_late=%" PRIu64 " recycle_max_ms=%.1f jvm_tick_max_ms=%.1f samples_max_ms=%.1f"
               " recycle_fold_max_ms=%.1f recycle_entries_max_ms=%.1f recycle_forget_max_ms=%.1f"
               " recycle_batch_max=%" PRIu64 " slots_touched=%" PRIu32 " csp_procs=%d csp_evicted=%" PRIu64
               " csp_refused=%" PRIu64 "\n",
            c->retired.n, c->retired.nstacks, c->retired.frames_bytes / 1024, retired_bytes(&c->retired) / 1024,
            c->o->recycled_budget / 1024, c->retired.folds, c->phases.n, mi.uordblks / 1024,
            mi.fordblks / 1024, mi.hblkhd / 1024, (double)c->slow.gap_ns / 1e6, c->slow.late,
            (double)c->slow.recycle_ns / 1e6, (double)c->slow.jvm_ns / 1e6, (double)c->slow.samples_ns / 1e6,
            (double)c->slow.fold_ns / 1e6, (double)c->slow.entries_ns / 1e6, (double)c->slow.forget_ns / 1e6,
            c->slow.retired_max, tracer_used_slots(c->t), c->csp.n, c->csp.evicted, c->csp.refused);
}
