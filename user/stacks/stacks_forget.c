/* Letting the stack cache's entries go: those of recycled blockers and of
 * exited processes, and templates unused for a minute (kept as pcs alone
 * first). */
#include "stacks.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/parktrace.h"
#include "jvm_frames.h"
#include "stack_maps.h"
#include "monotonic.h"
#include "procmaps.h"
#include "services.h"
#include "unwind.h"
#include "unwind_tables.h"
#include "stacks_parts.h"
#include "procstatus.h"

/* Takes the entries GONE picks off the retry list (it holds pointers). */
static void drop_retries(struct stacks *s, bool (*gone)(const void *ctx, uint32_t slot, int tgid), const void *ctx)
{
    int kept = 0;
    for (int i = 0; i < s->nretry; i++)
        if (!gone(ctx, s->retry[i]->slot, s->retry[i]->tgid))
            s->retry[kept++] = s->retry[i];
    s->nretry = kept;
}

/* Frees the entries and call-path marks GONE picks (by slot and process),
 * and takes them off the retry list, reading the whole table (an exited
 * process's; recycling's go by their slots' chains, forget_one_slot).
 * TEMPLATES: whether GONE can pick a process's templates
 * (KSTACK_TEMPLATE), which then take a pass of their own. */
static void forget(struct stacks *s, bool (*gone)(const void *ctx, uint32_t slot, int tgid), const void *ctx,
                   bool templates_too)
{
    drop_retries(s, gone, ctx);
    /* Off their slots' chains first, while GONE can still read them. */
    for (int h = 0; h < SLOT_BUCKETS; h++) {
        for (struct entry **p = &s->by_slot[h], *e; (e = *p);)
            if (gone(ctx, e->slot, e->tgid))
                *p = e->slot_next;
            else
                p = &e->slot_next;
        for (struct canon **p = &s->canon_by_slot[h], *c; (c = *p);)
            if (gone(ctx, c->slot, c->tgid))
                *p = c->slot_next;
            else
                p = &c->slot_next;
    }
    /* Blockers' entries first: they hold references to the templates. */
    for (int templates = 0; templates < 1 + templates_too; templates++)
        for (int h = 0; h < BUCKETS; h++)
            for (struct entry **p = &s->table[h], *e; (e = *p);) {
                if ((e->slot == KSTACK_TEMPLATE) == templates && gone(ctx, e->slot, e->tgid)) {
                    *p = e->next;
                    s->ncompact -= e->compact;
                    stacks_free_entry(e);
                } else {
                    p = &e->next;
                }
            }
    for (int h = 0; h < CANON_BUCKETS; h++)
        for (struct canon **p = &s->canon[h], *c; (c = *p);) {
            if (gone(ctx, c->slot, c->tgid)) {
                *p = c->next;
                free(c);
            } else {
                p = &c->next;
            }
        }
}

struct slot_filter {
    bool (*gone)(void *ctx, uint32_t slot);
    void *ctx;
};

static bool slot_gone(const void *ctx, uint32_t slot, int tgid)
{
    (void)tgid;
    const struct slot_filter *f = ctx;
    return slot != KSTACK_TEMPLATE && f->gone(f->ctx, slot);
}

/* Unlinks E from its bucket of the table. */
static void unlink_entry(struct stacks *s, const struct entry *e)
{
    for (struct entry **p = &s->table[stacks_bucket(e->slot, e->tgid, e->stack_id)]; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            return;
        }
}

static void unlink_canon(struct stacks *s, const struct canon *c)
{
    for (struct canon **p = &s->canon[canon_bucket(c->hash, c->slot, c->tgid)]; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            return;
        }
}

/* SLOT's entries and marks, found by its chains, freed. */
static void forget_one_slot(struct stacks *s, uint32_t slot)
{
    for (struct entry **p = &s->by_slot[slot % SLOT_BUCKETS], *e; (e = *p);) {
        if (e->slot != slot) {
            p = &e->slot_next;
            continue;
        }
        *p = e->slot_next;
        unlink_entry(s, e);
        s->ncompact -= e->compact;
        stacks_free_entry(e);
    }
    for (struct canon **p = &s->canon_by_slot[slot % SLOT_BUCKETS], *c; (c = *p);) {
        if (c->slot != slot) {
            p = &c->slot_next;
            continue;
        }
        *p = c->slot_next;
        unlink_canon(s, c);
        free(c);
    }
}

void stacks_forget_slots(struct stacks *s, bool (*gone)(void *ctx, uint32_t slot), void *ctx, const uint32_t *slots,
                         uint32_t n)
{
    const struct slot_filter f = {gone, ctx};
    drop_retries(s, slot_gone, &f);
    for (uint32_t i = 0; i < n; i++)
        forget_one_slot(s, slots[i]);
}

static bool process_gone(const void *ctx, uint32_t slot, int tgid)
{
    (void)slot;
    return tgid == *(const int *)ctx;
}

void stacks_forget_process(struct stacks *s, int tgid)
{
    forget(s, process_gone, &tgid, true);
}

/* A process's template of a kernel-unwound stack that no blocker's entry
 * has named for TEMPLATE_IDLE_NS goes: a long-lived JVM's stacks change as
 * its JIT code does, and an hour's soak kept 4 000 such copies. Should it
 * be needed again, it is loaded from the kernel's table. When the kernel's
 * table has let it go, it is the only copy (a thread's cache may still
 * give its id: a cache hit does not refresh the kernel's LRU), so it stays
 * as its pcs and Java names, unnamed (named again if needed), up to
 * COMPACT_MAX such; past that the longest unused go, and one needed again
 * reads cut short and counts in stacks_lost. Looked at every
 * TRIM_TEMPLATES_NS. */
#define TEMPLATE_IDLE_NS 60000000000ULL
#define TRIM_TEMPLATES_NS 10000000000ULL
#define COMPACT_MAX 8192

static bool template_unused(const struct entry *e, uint64_t now)
{
    return e->slot == KSTACK_TEMPLATE && !e->refs && now - e->idle_ns > TEMPLATE_IDLE_NS;
}

/* Whether the kernel's table still holds stack ID. */
static bool kernel_holds(const struct stacks *s, int id)
{
    return stack_maps_ustack(&s->kernel, id, s->us);
}

/* What trimming does with unused template E: 0 keep, 1 compact, 2 free. */
static int trim_verdict(const struct stacks *s, const struct entry *e, uint64_t now, uint64_t oldest_kept)
{
    if (!template_unused(e, now))
        return 0;
    if (e->compact)
        return e->idle_ns < oldest_kept || kernel_holds(s, e->stack_id) ? 2 : 0;
    return !e->pcs || kernel_holds(s, e->stack_id) ? 2 : 1;
}

static int by_idle(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The idle time below which compact templates go to stay within COMPACT_MAX. */
static uint64_t compact_cutoff(const struct stacks *s)
{
    if (s->ncompact <= COMPACT_MAX)
        return 0;
    uint64_t *idle = malloc((size_t)s->ncompact * sizeof(*idle));
    if (!idle)
        return 0;
    int n = 0;
    for (int h = 0; h < BUCKETS; h++)
        for (const struct entry *e = s->table[h]; e && n < s->ncompact; e = e->next)
            if (e->compact)
                idle[n++] = e->idle_ns;
    qsort(idle, (size_t)n, sizeof(*idle), by_idle);
    uint64_t cut = n > COMPACT_MAX ? idle[n - COMPACT_MAX] : 0;
    free(idle);
    return cut;
}

void stacks_trim_templates(struct stacks *s, uint64_t now)
{
    if (now - s->trimmed_ns < TRIM_TEMPLATES_NS)
        return;
    s->trimmed_ns = now;
    uint64_t cut = compact_cutoff(s);
    struct entry *doomed = NULL;
    for (int h = 0; h < BUCKETS; h++)
        for (struct entry **p = &s->table[h], *e; (e = *p);) {
            int v = trim_verdict(s, e, now, cut);
            if (v == 2) {
                *p = e->next;
                e->next = doomed;
                doomed = e;
                e->doomed = true;
                continue;
            }
            if (v == 1) {
                stacks_unname(e);
                e->compact = true;
                s->ncompact++;
            }
            p = &e->next;
        }
    int kept = 0;
    for (int i = 0; i < s->nretry; i++)
        if (!s->retry[i]->doomed)
            s->retry[kept++] = s->retry[i];
    s->nretry = kept;
    for (struct entry *e = doomed, *next; e; e = next) {
        next = e->next;
        s->ncompact -= e->compact;
        stacks_free_entry(e);
        s->templates_trimmed++;
    }
}

uint64_t stacks_templates_trimmed(const struct stacks *s)
{
    return s->templates_trimmed;
}

int stacks_templates_compact(const struct stacks *s)
{
    return s->ncompact;
}

int stacks_dead_processes(const struct stacks *s, int *tgids, int max)
{
    /* Each process looked at once: an open-addressed set of those seen. */
    enum { SEEN = 4096 };
    int seen[SEEN] = {0}, nseen = 0, n = 0;
    for (int h = 0; h < BUCKETS && n < max && nseen < SEEN / 2; h++)
        for (const struct entry *e = s->table[h]; e && n < max && nseen < SEEN / 2; e = e->next) {
            if (e->tgid <= 0)
                continue;
            unsigned k = (unsigned)e->tgid * 2654435761u % SEEN;
            while (seen[k] && seen[k] != e->tgid)
                k = (k + 1) % SEEN;
            if (seen[k])
                continue;
            seen[k] = e->tgid;
            nseen++;
            if (procstatus_gone(e->tgid))
                tgids[n++] = e->tgid;
        }
    return n;
}
