/* The collector's core: made and freed, its tick (new blockers named, the
 * kernel's tables recycled, exited processes forgotten), and each
 * blocker's record: process, variable name, first stack, class and role.
 * Reports are built in collect_report.c, recycling in collect_recycle.c,
 * the stacks and wakers of a report in collect_stacks.c. */
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
#include "cgroup_names.h"
#include "procmaps.h"
#include "procstatus.h"
#include "self_counters.h"
#include "services.h"
#include "slot_table.h"
#include "stack_maps.h"
#include "stacks.h"
#include "symbolize.h"
#include "view.h"
#include "wakers.h"
#include "collect_parts.h"
#include "oom.h"

#define MAX_RESOLVE_TRIES 20
#define MAX_RESTACKS 3
/* A JVM is known to the class namer a moment before its code is walked as
 * Java frames: a blind first stack may come back blind a few times. */
#define MAX_BLIND_RESTACKS 16
#define MAX_JVM_WAITS 200   /* passes a blind Java blocker waits for its JVM's walks */

_Static_assert(PT_MODEL_COMM >= PT_COMM_LEN + 1, "a model's process name holds the kernel's");

#define NAMING_BUDGET_NS 50000000ULL   /* of a tick's time, for new blockers */

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
    c->grace = calloc(t->nslots ? t->nslots : 1, sizeof(*c->grace));
    if (!c->b || !c->retiring || !c->retiring_since || !c->grace) {
        out_of_memory("the blocker table");
    }
    c->cpu_start_ns = c->cpu_window_ns = process_cpu_ns();
    c->kernel = stack_maps_of(t);
    struct proc_lives lives = proc_lives_of(t);
    collector_begin(c);
    csp_init(&c->csp, &lives, c->start_ns);
}

void collector_begin(struct collector *c)
{
    c->start_ns = c->window_start = c->csp.run_start = monotonic_ns();
    clock_gettime(CLOCK_REALTIME, &c->start_wall);
    c->window_wall = c->start_wall;
    tracer_set_run_start(c->t, c->start_ns);
}

/* Names a blocker: process, global variable, first stack, class and role.
 * Retried while the first stack has not been unwound yet. */
/* Slot IDX's record, allocated at its first use. */
struct blocker *collector_record(struct collector *c, uint32_t idx)
{
    if (!c->b[idx] && !(c->b[idx] = calloc(1, sizeof(struct blocker)))) {
        out_of_memory("the blocker table");
    }
    return c->b[idx];
}

/* Frees slot IDX's record, if it has one. */
void collector_free_record(struct collector *c, uint32_t idx)
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

/* A futex's class read off the one frame its first wait was at, its
 * naming stack left out by the stack budget: the futex call inside
 * __lll_lock_wait names a pthread mutex. Frames shared by several
 * primitives (libc's common futex wait) leave it a futex. */
static void classify_at_ip(struct collector *c, int tgid, uint64_t ip, struct pt_class *out)
{
    struct pt_frame f = {0};
    symbolize_code(c->sv->maps, tgid, ip, false, &f);
    struct pt_stack one = {.n = f.name ? 1 : 0, .frames = &f};
    classify_futex(&one, out);
    frame_free(&f);
}

/* The function code address ADDR of process TGID lies in (a select's
 * call site), as a string of its own, or NULL. */
static char *code_name(struct collector *c, int tgid, uint64_t addr)
{
    struct pt_frame f = {0};
    symbolize_code(c->sv->maps, tgid, addr, true, &f);
    char *name = f.name && f.name[0] != '[' ? strdup(f.name) : NULL;
    frame_free(&f);
    return name;
}

/* Names B's class and role from slot S: a Java blocker's from its object
 * (false until its class is read), a futex's from its first stack or the
 * one frame its first wait was at. */
static bool name_class(struct collector *c, const struct pt_slot *s, struct blocker *b, uint32_t kind)
{
    if (kind == PT_KIND_GO_PARK) {
        /* Named after the object, not the semaphore inside it; a select's
         * key is its call site, code. */
        classify_go(b->first_stack, (uint32_t)s->key.ino, &b->cls);
        if (!b->name && s->key.ino == PT_GO_SELECT)
            b->name = code_name(c, (int)s->first_tgid, s->key.addr);
        else if (!b->name && b->first_stack->n)
            b->name = symbolize_data(c->sv->maps, (int)s->first_tgid, s->key.addr - b->cls.field);
        return true;
    }
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
                out_of_memory("class names");
            }
            classify_java(b->java_class ? b->java_class : "<unknown class>", supers, &b->cls);
            b->owner_recorded = strstr(supers, "AbstractOwnableSynchronizer") != NULL;
            /* Any object can be a monitor: the kind, not the class, gives the role. */
            if (kind == PT_KIND_JVM_MONITOR)
                b->cls.wait = false;
            else if (kind == PT_KIND_JVM_WAIT)
                b->cls.wait = true;
        }
        return b->java_class != NULL;
    }
    if (b->first_stack->n || !s->naming_ip) {
        classify_futex(b->first_stack, &b->cls);
    } else if (!b->ip_named) {
        classify_at_ip(c, (int)s->first_tgid, s->naming_ip, &b->cls);
        b->ip_named = true;
    }
    return true;
}

void collector_resolve(struct collector *c, uint32_t idx)
{
    struct blocker *b = collector_record(c, idx);
    const struct pt_slot *s = &c->t->slots[idx];

    if (b->resolved)
        return;
    if (!b->tries) {
        b->pid = s->key.kind & PT_KEY_SHARED ? (int)s->first_tgid : (int)s->key.owner;
        struct pm_proc *p = procmaps_get(c->sv->maps, b->pid);
        memcpy(b->thread, s->first_comm, PT_COMM_LEN);
        snprintf(b->comm, sizeof(b->comm), "%s", p->comm[0] ? p->comm : b->thread);
        b->cgroup = p->cgroup;
        b->ns_pid = p->ns_pid;
        if ((s->key.kind & 0xff) == PT_KIND_FUTEX)
            b->name = symbolize_data(c->sv->maps, (int)s->first_tgid, s->first_uaddr);
    }
    b->tries++;
    /* While a first stack asked for again has not come, the old one stays. */
    if (s->first_stack >= 0 || !b->first_stack)
        b->first_stack = stacks_resolve(c->stacks, idx, (int)s->first_tgid, s->first_stack);
    uint32_t kind = s->key.kind & 0xff;
    bool named = name_class(c, s, b, kind);
    /* The kernel reads no owner for wait chains where there is none. */
    if (named && kind == PT_KIND_JVM_PARK && !b->owner_recorded)
        __atomic_or_fetch(&c->t->slots[idx].chain_flags, PT_SLOT_NO_OWNER, __ATOMIC_RELAXED);
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
    /* Asked for again only once the kernel walks the JVM's Java frames:
     * before, the new stack comes back as blind (under load, a thread
     * pool's Semaphore spent its 16 retakes so before the tracker's last
     * step). Looked at again each pass meanwhile, a few seconds at most. */
    if (blind && b->resolved && !jvm_tracker_walks_java(c->jvm, b->pid) && b->jvm_waits < MAX_JVM_WAITS) {
        b->jvm_waits++;
        b->resolved = false;
        return;
    }
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
    collector_resolve(c, idx);
    return c->b[idx];
}

/* Whether B waits for a first stack asked for again, or for its JVM's
 * Java frames to be walked: those are looked at each tick. (A first stack
 * not yet unwound is looked at by reports, as many as MAX_RESOLVE_TRIES.) */
static bool awaits_stack(const struct blocker *b)
{
    return !b->resolved && (b->restacks || b->blind_restacks || b->jvm_waits);
}

/* Looks again at the blockers left unresolved, within the tick's naming
 * budget; those resolved, or whose slot went back to the kernel (its
 * record freed, or another blocker's now), leave the list. */
static void resolve_pending(struct collector *c, uint64_t until)
{
    int keep = 0, k = 0;
    for (; k < c->npending && monotonic_ns() <= until; k++) {
        uint32_t i = c->pending[k];
        struct blocker *b = i < tracer_used_slots(c->t) && slot_valid(&c->t->slots[i]) ? c->b[i] : NULL;
        if (!b || !b->pending)
            continue;
        collector_resolve(c, i);
        if (!awaits_stack(b))
            b->pending = false;
        else
            c->pending[keep++] = i;
    }
    for (; k < c->npending; k++)    /* not reached this tick */
        c->pending[keep++] = c->pending[k];
    c->npending = keep;
}

void collector_note_max(uint64_t *max, uint64_t v)
{
    if (v > *max)
        *max = v;
}

/* A part of the loop that took NS: its longest for --self-stats, and with
 * it a line on stderr when it was long enough to hold recycling up (the
 * time of day, to line up with a soak's reports). */
#define SLOW_PART_NS 250000000ULL
void collector_note_slow(const struct collector *c, uint64_t *max, const char *part, uint64_t ns)
{
    collector_note_max(max, ns);
    if (!c->o->self_stats || ns < SLOW_PART_NS)
        return;
    struct timespec wall;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &wall);
    gmtime_r(&wall.tv_sec, &tm);
    fprintf(stderr, "parktrace: self-stats: %02d:%02d:%02d.%03ld UTC %s took %.1f ms\n", tm.tm_hour, tm.tm_min,
            tm.tm_sec, wall.tv_nsec / 1000000, part, (double)ns / 1e6);
}

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
                collector_unpublish(c, i, now);
        }
    }
    collector_unpublish_flush(c, now);
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

/* What recycled blockers' sites and stacks may take (--recycled-budget)
 * before those of exited processes are folded together: a machine that
 * starts processes all day would otherwise keep every one's. */
static void keep_retired_in_budget(struct collector *c)
{
    uint64_t bytes = retired_bytes(&c->retired);
    if (bytes <= c->o->recycled_budget || bytes <= c->refold_bytes)
        return;
    retired_fold(&c->retired, procstatus_alive, RETIRED_EXITED_SHAPES);
    /* Still over three quarters of it: exited processes keep their totals
     * per kind and class, not their commands, sites and frames. */
    if (retired_bytes(&c->retired) > c->o->recycled_budget / 4 * 3)
        retired_fold(&c->retired, procstatus_alive, RETIRED_EXITED);
    /* Still over it: live processes' sites go the same way (a process
     * making blockers at ever new sites, kept whole, grew without bound). */
    if (retired_bytes(&c->retired) > c->o->recycled_budget)
        retired_fold(&c->retired, procstatus_alive, RETIRED_ALL);
    /* Live processes' sites alone over it: not again before they grow by a
     * quarter (each fold rebuilds them all). */
    c->refold_bytes = retired_bytes(&c->retired) / 4 * 5;
}

void collector_tick(struct collector *c)
{
    uint64_t now = monotonic_ns();
    /* First, so that the kernel's table has room whatever the rest costs. */
    collector_recycle_at(c, now);
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
    collector_note_slow(c, &c->slow.recycle_ns, "recycling", t1 - now);
    collector_note_slow(c, &c->slow.jvm_ns, "housekeeping (exited processes, JVMs)", t2 - t1 - recycled_ns);
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
        collector_resolve(c, i);
        /* Its process's alive time is counted while it lives. */
        if (!c->b[i]->watched) {
            csp_watch(&c->csp, c->b[i]->pid, now);
            c->b[i]->watched = true;
        }
        if (awaits_stack(c->b[i]) && !c->b[i]->pending && c->npending < COLLECT_PENDING) {
            c->b[i]->pending = true;
            c->pending[c->npending++] = i;
        }
        if (settled)
            c->settled = i + 1;
    }
    resolve_pending(c, until);
}

void collector_free(struct collector *c)
{
    if (!c->t)
        return;     /* never made */
    for (uint32_t i = 0; i < c->t->nslots; i++)
        collector_free_record(c, i);
    free(c->b);
    free(c->retiring);
    free(c->retiring_since);
    free(c->grace);
    retired_free(&c->retired);
    map_dump_free(&c->scratch);
    map_dump_free(&c->scratch2);
    collector_chains_free(c);
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

/* The Java blockers still in the table whose first stack is blind, and
 * the retakes they asked for: a figure that stays above 0 names a JVM
 * whose Java frames the kernel could not walk. */
static void count_blind(const struct collector *c, struct self_values *v)
{
    v->v[SC_JAVA_BLIND_RETAKES].u = v->v[SC_JAVA_STACKS_BLIND].u = 0;
    for (uint32_t i = 0; i < tracer_used_slots(c->t); i++) {
        const struct blocker *b = c->b[i];
        if (!b || !slot_valid(&c->t->slots[i]) || (c->t->slots[i].key.kind & 0xff) == PT_KIND_FUTEX)
            continue;
        v->v[SC_JAVA_BLIND_RETAKES].u += (uint64_t)b->blind_restacks;
        if (b->first_stack && walked_blind(b->first_stack))
            v->v[SC_JAVA_STACKS_BLIND].u++;
    }
}

void collector_self_values(const struct collector *c, struct self_values *v)
{
    struct mallinfo2 mi = mallinfo2();
    v->v[SC_RETIRED_SITES].u = (uint64_t)c->retired.n;
    v->v[SC_CGROUPS].u = (uint64_t)cgroup_names_count(procmaps_cgroups(c->sv->maps));
    v->v[SC_CGROUPS_OVER].u = cgroup_names_over(procmaps_cgroups(c->sv->maps));
    v->v[SC_RETIRED_STACKS].u = (uint64_t)c->retired.nstacks;
    v->v[SC_RETIRED_FRAMES_KB].u = c->retired.frames_bytes / 1024;
    v->v[SC_RETIRED_KB].u = retired_bytes(&c->retired) / 1024;
    v->v[SC_RETIRED_BUDGET_KB].u = c->o->recycled_budget / 1024;
    v->v[SC_RETIRED_FOLDS].u = c->retired.folds;
    v->v[SC_PHASES].u = (uint64_t)c->phases.n;
    v->v[SC_HEAP_USED_KB].u = mi.uordblks / 1024;
    v->v[SC_HEAP_FREE_KB].u = mi.fordblks / 1024;
    v->v[SC_HEAP_MMAP_KB].u = mi.hblkhd / 1024;
    v->v[SC_RECYCLE_GAP_MAX_MS].d = (double)c->slow.gap_ns / 1e6;
    v->v[SC_RECYCLE_LATE].u = c->slow.late;
    v->v[SC_RECYCLE_MAX_MS].d = (double)c->slow.recycle_ns / 1e6;
    v->v[SC_JVM_TICK_MAX_MS].d = (double)c->slow.jvm_ns / 1e6;
    v->v[SC_SAMPLES_MAX_MS].d = (double)c->slow.samples_ns / 1e6;
    v->v[SC_RECYCLE_FOLD_MAX_MS].d = (double)c->slow.fold_ns / 1e6;
    v->v[SC_RECYCLE_ENTRIES_MAX_MS].d = (double)c->slow.entries_ns / 1e6;
    v->v[SC_RECYCLE_FORGET_MAX_MS].d = (double)c->slow.forget_ns / 1e6;
    v->v[SC_RECYCLE_BATCH_MAX].u = c->slow.retired_max;
    v->v[SC_SLOTS_TOUCHED].u = tracer_used_slots(c->t);
    v->v[SC_CSP_PROCS].u = (uint64_t)c->csp.n;
    v->v[SC_CSP_EVICTED].u = c->csp.evicted;
    v->v[SC_CSP_REFUSED].u = c->csp.refused;
    count_blind(c, v);
}

void collector_self_stats(const struct collector *c, FILE *f)
{
    struct self_values v = {0};
    collector_self_values(c, &v);
    self_values_print(f, &v, SELF_COLLECTOR, NULL, NULL);
}
