/* Recycling the kernel's blocker table (docs/design/recycling.md): idle
 * blockers unpublished, their figures, stacks and wakers handed to the
 * recycled ones (retired.c), their slots given back. */
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
#include "oom.h"
#include "cgroup_names.h"
#include "procmaps.h"
#include "services.h"
#include "slot_table.h"
#include "stack_maps.h"
#include "stacks.h"
#include "symbolize.h"
#include "view.h"
#include "wakers.h"
#include "collect_parts.h"

/* Takes the blockers marked by collector_unpublish out of the kernel's
 * index. */
void collector_unpublish_flush(struct collector *c, uint64_t now)
{
    uint32_t n = c->nunpublishing;
    if (!n)
        return;
    struct pt_blocker_key keys[UNPUBLISH_BATCH];
    bool gone[UNPUBLISH_BATCH];
    for (uint32_t k = 0; k < n; k++)
        keys[k] = c->t->slots[c->unpublishing[k]].key;
    slot_table_unpublish(c->t, keys, n, gone);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = c->unpublishing[k];
        if (gone[k]) {
            c->retiring[i] = 1;
            c->retiring_since[i] = now;
            c->grace[c->ngrace++] = i;     /* each slot is in state 1 at most once at a time */
            c->unpublished_total++;
        } else {
            __atomic_store_n(&c->t->slots[i].valid, 1, __ATOMIC_RELEASE);
        }
    }
    c->nunpublishing = 0;
}

/* Takes slot I's blocker out of the kernel's index (at the next flush,
 * which the caller makes): a new wait on it starts a new blocker, and the
 * slot is retired once the CPUs that found it before are surely done with
 * it (recycle). */
void collector_unpublish(struct collector *c, uint32_t i, uint64_t now)
{
    struct pt_slot *s = &c->t->slots[i];
    if (__atomic_load_n(&s->valid, __ATOMIC_ACQUIRE) == 2)
        return;     /* marked already */
    /* Valid 2 first: a thread whose last wait was on this slot takes it
     * again without the index only while it is 1 (last_slot). A wait that
     * finds it through the index before it leaves holds it back as any
     * wait in its grace does (parked_now). */
    __atomic_store_n(&s->valid, 2, __ATOMIC_RELEASE);
    c->unpublishing[c->nunpublishing++] = i;
    if (c->nunpublishing == UNPUBLISH_BATCH)
        collector_unpublish_flush(c, now);
}

/* ---- Recycling slots (metrics.md, "Blockers that come and go") ----------
 * Once the kernel's table is half full, a blocker with no waiter that has
 * been idle a while leaves it: first its key is unpublished (new
 * waits on it take a new slot), then, a grace period later and still with
 * no waiter, what it counted goes to its site in c->retired, its entries in
 * the stack, waker, thread and sample tables go (their stacks to the
 * retired ones), and its zeroed slot goes back to the kernel's free_ring. */
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
#define RECYCLE_LATE_NS 200000000ULL   /* a recycling this late is noted (--self-stats) */
#define RECYCLE_DUE_NS 50000000ULL     /* the loop's tick */
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
    collector_resolve(c, i);
    struct blocker *b = c->b[i];
    return (struct retired_member){
        .pid = b->pid,
        .id = slot_blocker_id(s),
        .kind = pt_kind_names[s->key.kind & 0xff],
        .cls = retiring_class(b),
        .site = blocker_top_frame(b),
        .comm = b->comm,
        .thread = b->thread,
        .cgroup = b->cgroup ? b->cgroup->path : NULL,
        .container = b->cgroup ? b->cgroup->container : NULL,
        .ns_pid = b->ns_pid,
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
    collector_snapshot(&c->t->slots[i], now, PT_HIST_SLOTS, &m.final);
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
    const struct blocker *b = collector_record(c, slot);
    struct pt_model_stack who = {.leaf = retiring_class(b)};
    stack_owner(c, (int)tgid, b, &who);
    stack_blocker(c, slot, b, &who);
    retired_add_stack(&c->retired, who.root, stacks_resolve(c->stacks, slot, (int)tgid, stack_id), &who,
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
    collector_comm_of(c, (int)k->waker_tgid, c->b[k->slot], comm);
    retired_add_waker(&c->retired, &m, st, comm, v->count, v->ns);
}

/* Reads table WHICH whole and keeps the entries of the retiring slots in D. */
static void read_retiring(struct collector *c, enum stack_times which, size_t key_size, size_t val_size,
                          struct map_dump *d)
{
    stack_maps_dump_of(&c->kernel, which, d, slot_retiring, c);
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
    waker_pairs_bound(woken->keys, woken->vals, woken->n, c->t->slots, used);
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
 * known waker) and wait chains to the retired ones, and deletes their
 * table entries. */
static void retire_entries(struct collector *c)
{
    retire_stacks(c);
    collector_retire_chains(c);
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
    collector_recycle_at(c, monotonic_ns());
}

uint64_t collector_recycle_due(struct collector *c)
{
    uint64_t now = monotonic_ns();
    if (now - c->slow.last_recycle < RECYCLE_DUE_NS)
        return 0;
    collector_recycle_at(c, now);
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
        collector_note_slow(c, &c->slow.samples_ns, "a slice of stack copies", monotonic_ns() - t);
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
/* While less than a quarter of the table is taken, once a second: each
 * pass reads the stack and waker tables whole, and at H2's 7 000 new
 * blockers a second four passes a second were a quarter of parktrace's
 * CPU. A second's folded slots wait meanwhile, a tenth of the table at
 * that rate. */
#define ENTRIES_SPARSE_NS 1000000000ULL

/* How long folded slots may wait to go back, with OCCUPIED of NSLOTS taken. */
static uint64_t entries_every(uint32_t occupied, uint32_t nslots)
{
    return occupied < nslots / 4 ? ENTRIES_SPARSE_NS : ENTRIES_EVERY_NS;
}
/* While less than three quarters of the table is taken, at most this many
 * blockers fold at a tick, and their slots go back then:
 * a pass over 18 830 took 0.4 s on a loaded machine, the table filling
 * meanwhile (80 000 a second at a 50 ms tick is three times a soak's
 * churn). */
#define RECYCLE_BATCH 4096u

/* How many slots fold at a tick, with OCCUPIED of NSLOTS taken. */
static uint32_t fold_batch(uint32_t occupied, uint32_t nslots)
{
    return occupied >= nslots / 4 * 3 ? nslots : RECYCLE_BATCH;
}

/* The stack cache's entries of the retiring slots among the first N. */
static void forget_retiring_stacks(struct collector *c, uint32_t n)
{
    uint32_t count = 0, k = 0;
    for (uint32_t i = 0; i < n; i++)
        count += c->retiring[i] == 2;
    uint32_t *gone = malloc((size_t)(count ? count : 1) * sizeof(*gone));
    if (!gone)
        out_of_memory("the slots to recycle");
    for (uint32_t i = 0; i < n && k < count; i++)
        if (c->retiring[i] == 2)
            gone[k++] = i;
    stacks_forget_slots(c->stacks, slot_retiring, c, gone, k);
    free(gone);
}

static void return_slots(struct collector *c, uint32_t n)
{
    uint64_t t1 = monotonic_ns();
    retire_entries(c);
    uint64_t t2 = monotonic_ns();
    forget_retiring_stacks(c, n);
    collector_note_slow(c, &c->slow.entries_ns, "recycling's table entries", t2 - t1);
    collector_note_slow(c, &c->slow.forget_ns, "recycling's stack cache", monotonic_ns() - t2);
    collector_note_max(&c->slow.retired_max, c->folded);
    c->folded = 0;
    c->entries_ns = t1;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    for (uint32_t i = 0; i < n; i++) {
        if (c->retiring[i] != 2)
            continue;
        struct blocker *b = c->b[i];
        if (b && b->phase)
            collector_feed_phase(c, b, NULL, wall);
        collector_free_record(c, i);
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

/* Folds the unpublished slots past their grace with no waiter, up to
 * BATCH folded at once, in the order they were unpublished; keeps the
 * others listed. The number still in state 1. A tick under churn reads
 * this list, not every slot: 20 000 slots twenty times a second was a
 * ninth of parktrace's CPU on H2. */
static uint32_t fold_graced(struct collector *c, uint64_t now, uint32_t batch)
{
    uint32_t kept = 0;
    for (uint32_t k = 0; k < c->ngrace; k++) {
        uint32_t i = c->grace[k];
        if (c->retiring[i] != 1)
            continue;
        if (c->folded < batch && now - c->retiring_since[i] >= RECYCLE_GRACE_NS &&
            __atomic_load_n(&c->t->slots[i].parked_now, __ATOMIC_ACQUIRE) == 0) {
            retire_member(c, i, now);
            c->retiring[i] = 2;
            c->folded++;
        } else {
            c->grace[kept++] = i;
        }
    }
    c->ngrace = kept;
    return kept;
}

void collector_recycle_at(struct collector *c, uint64_t now)
{
    /* How late recycling ran (--self-stats): the table fills while it
     * does not. */
    if (c->slow.last_recycle && now - c->slow.last_recycle > RECYCLE_LATE_NS)
        c->slow.late++;
    if (c->slow.last_recycle)
        collector_note_slow(c, &c->slow.gap_ns, "the gap between recyclings", now - c->slow.last_recycle);
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
    if (cold && !c->flush && now - c->scanned_ns < every) {
        if (c->unpublished)
            c->unpublished = fold_graced(c, now, fold_batch(c->occupied, nslots));
        if (c->folded && now - c->entries_ns >= entries_every(c->occupied, nslots))
            return_slots(c, n);
        return;
    }
    c->scanned_ns = now;
    uint32_t live = 0, occupied = 0;
    /* Three quarters taken, every blocker whose grace is over folds now,
     * however long the pass: a batch per tick is a ceiling on the slots
     * given back a second, and on a loaded machine, with ticks 0.7-1.1 s
     * apart, that was 4-6 000 a second against a churn of 26 000 (an
     * hour's soak filled the table, 7 289 waits dropped). */
    uint32_t batch = fold_batch(c->occupied, nslots);
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
        if (state == 1)
            continue;      /* fold_graced's */
        if (!valid)
            continue;
        live++;
        uint64_t last = s->last_ts;
        if (idle_ns && last && last + idle_ns < now && __atomic_load_n(&s->parked_now, __ATOMIC_ACQUIRE) == 0)
            collector_unpublish(c, i, now);
    }
    collector_unpublish_flush(c, now);
    uint32_t unpublished = fold_graced(c, now, batch);
    c->live_blockers = live;
    c->occupied = occupied;
    c->unpublished = unpublished;
    collector_note_slow(c, &c->slow.fold_ns, "recycling's scan and folds", monotonic_ns() - now);
    /* Folded slots go back together: at once when a report is due (its
     * rows must not count them twice) or the table is three quarters
     * taken, else every ENTRIES_EVERY_NS (entries_every). */
    if (c->folded && (c->flush || c->folded >= batch || occupied >= nslots / 4 * 3 ||
                      now - c->entries_ns >= entries_every(occupied, nslots)))
        return_slots(c, n);
    c->flush = false;
}
