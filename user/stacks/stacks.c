#include "stacks.h"

#include <signal.h>
#include <errno.h>
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

static struct entry *lookup(struct stacks *s, uint32_t slot, int tgid, int stack_id);

static const struct pt_stack empty;

struct stacks *stacks_new(const struct stack_maps *kernel, const struct stacks_java_namer *namer,
                          struct pt_services *sv)
{
    struct stacks *s = calloc(1, sizeof(*s));
    if (s) {
        s->us = malloc(sizeof(*s->us));
        s->smp = malloc(sizeof(*s->smp));
    }
    if (!s || !s->us || !s->smp) {
        fprintf(stderr, "parktrace: out of memory for the stack table\n");
        stacks_free(s);
        return NULL;
    }
    if (namer)
        s->java_namer = *namer;
    s->sv = sv;
    s->kernel = *kernel;
    return s;
}

static bool kernel_unwound(int stack_id)
{
    return stack_id >= 0 && (stack_id & PT_USTACK_ID);
}

/* A stack the kernel unwound from CFI rows: its pcs, whole, and the names of
 * its Java frames (taken when the stack was new, while the JVM ran). */
static void load_ustack(struct stacks *s, struct entry *e)
{
    struct pt_ustack *us = s->us;
    if (!stack_maps_have_ustacks(&s->kernel))
        return;
    if (!stack_maps_ustack(&s->kernel, e->stack_id, us)) {
        /* Its new-stack event was lost (a full ring) and the table let it
         * go: counted, and taken if it is walked and stored again. */
        s->lost += !e->lost;
        e->lost = true;
        return;
    }
    if (e->lost) {
        s->lost--;
        e->lost = false;
    }
    int n = us->nr < PT_MAX_FRAMES ? (int)us->nr : PT_MAX_FRAMES;
    e->pcs = malloc((size_t)(n ? n : 1) * sizeof(*e->pcs));
    memcpy(e->pcs, us->ip, (size_t)n * sizeof(*e->pcs));
    e->npcs = n;
    e->truncated = (us->flags & PT_USTACK_TRUNCATED) || n == 0;
    e->blind = (us->flags & PT_USTACK_EARLY) != 0;
    /* Cut short: perhaps in a library loaded since the process's tables
     * were made (dlopen); the next walks get fresh ones. */
    if (us->flags & PT_USTACK_TRUNCATED)
        unwind_tables_refresh(s->sv->tables, e->tgid);
    stacks_name_java(s, e->tgid, NULL, NULL, e);
}

void stacks_name_kernel_stack(struct stacks *s, int tgid, int stack_id)
{
    struct entry *e = lookup(s, KSTACK_TEMPLATE, tgid, stack_id);
    if (e->lost) {      /* stored again: this time it is there */
        load_ustack(s, e);
        if (e->pcs)
            stacks_rename_entry(s, e);
    }
}

uint64_t stacks_lost(const struct stacks *s)
{
    return s->lost;
}

void stacks_usage(const struct stacks *s, size_t *entries, size_t *templates, size_t *bytes)
{
    *entries = *templates = *bytes = 0;
    for (int h = 0; h < BUCKETS; h++)
        for (const struct entry *e = s->table[h]; e; e = e->next) {
            (*entries)++;
            *templates += e->slot == KSTACK_TEMPLATE;
            *bytes += sizeof(*e) + (size_t)e->npcs * sizeof(*e->pcs) + (size_t)e->st.n * sizeof(*e->st.frames);
            for (int i = 0; i < e->st.n; i++)
                *bytes += (e->st.frames[i].name ? strlen(e->st.frames[i].name) + 1 : 0) +
                          (e->st.frames[i].module ? strlen(e->st.frames[i].module) + 1 : 0);
            for (int i = 0; e->java && i < e->npcs; i++)
                *bytes += e->java[i] ? strlen(e->java[i]) + 1 : 0;
        }
}

static struct entry *lookup(struct stacks *s, uint32_t slot, int tgid, int stack_id)
{
    unsigned h = stacks_bucket(slot, tgid, stack_id);
    for (struct entry *e = s->table[h]; e; e = e->next)
        if (e->slot == slot && e->tgid == tgid && e->stack_id == stack_id)
            return e;
    struct entry *e = calloc(1, sizeof(*e));
    e->slot = slot;
    e->tgid = tgid;
    e->stack_id = stack_id;
    e->truncated = true;     /* until an unwind says otherwise */
    e->next = s->table[h];
    s->table[h] = e;
    if (slot != KSTACK_TEMPLATE) {
        e->slot_next = s->by_slot[slot % SLOT_BUCKETS];
        s->by_slot[slot % SLOT_BUCKETS] = e;
    }
    if (kernel_unwound(stack_id)) {
        if (slot == KSTACK_TEMPLATE) {
            e->idle_ns = monotonic_ns();
            load_ustack(s, e);
        } else {
            e->tmpl = lookup(s, KSTACK_TEMPLATE, tgid, stack_id);
            e->tmpl->refs++;
            if (e->tmpl->compact) {    /* in use again: compacted again only once unused */
                e->tmpl->compact = false;
                s->ncompact--;
            }
            e->truncated = e->tmpl->truncated;
            e->blind = e->tmpl->blind;
        }
    }
    return e;
}

static int by_tgid(const void *a, const void *b)
{
    uint32_t x = ((const struct pt_sample_key *)a)->tgid, y = ((const struct pt_sample_key *)b)->tgid;
    return (x > y) - (x < y);
}

#define POLL_KEYS 256   /* stack copies taken per call */

bool stacks_poll_samples(struct stacks *s, uint64_t deadline)
{
    struct pt_sample *smp = s->smp;
    uint64_t pcs[PT_MAX_FRAMES], fps[PT_MAX_FRAMES];
    bool truncated;

    if (!stack_maps_have_samples(&s->kernel))
        return false;
    /* Deleting while iterating restarts the walk; collect keys first. */
    struct pt_sample_key keys[POLL_KEYS];
    int nkeys = stack_maps_sample_keys(&s->kernel, keys, POLL_KEYS);
    /* A process's samples in a row: with the kernel's walk, its unwinder
     * (and the ELF files it maps) can go as soon as they are done. */
    qsort(keys, (size_t)nkeys, sizeof(*keys), by_tgid);
    for (int i = 0; i < nkeys; i++) {
        if (!stack_maps_sample(&s->kernel, &keys[i], smp))
            continue;
        struct entry *e = lookup(s, keys[i].slot, (int)keys[i].tgid, keys[i].stack_id);
        if (!e->pcs) {
            int n = unwind_sample(s->sv->unwinder, (int)keys[i].tgid, smp, pcs, fps, PT_MAX_FRAMES, &truncated);
            if (n > 0) {
                e->pcs = malloc((size_t)n * sizeof(*pcs));
                memcpy(e->pcs, pcs, (size_t)n * sizeof(*pcs));
                e->npcs = n;
                if (e->tallied && e->truncated && !truncated)
                    s->tally_truncated--;
                e->truncated = truncated;
                stacks_name_java(s, (int)keys[i].tgid, smp, fps, e);
                stacks_rename_entry(s, e);    /* a frame-pointer naming may have come first */
            }
        }
        stack_maps_drop_sample(&s->kernel, &keys[i]);
        bool last = i + 1 == nkeys || keys[i + 1].tgid != keys[i].tgid;
        if (s->sv->tables && last)
            unwind_release(s->sv->unwinder, (int)keys[i].tgid);
        /* Past the deadline, at a process's end (its unwinder is let go). */
        if (deadline && last && i + 1 < nkeys && monotonic_ns() > deadline)
            return true;
    }
    stacks_retry_names(s);
    return nkeys == POLL_KEYS;   /* more may wait */
}

/* The blocker's own entry for STACK_ID, its stack named (in its template
 * for a kernel-unwound stack) into *ST. */
struct entry *stacks_resolve_entry(struct stacks *s, uint32_t slot, int tgid, int stack_id,
                                   const struct pt_stack **st)
{
    /* Through the blocker's own entry, whose reference keeps the template
     * (and the pointer returned) while the blocker lives. */
    struct entry *e = lookup(s, slot, tgid, stack_id), *named = e->tmpl ? e->tmpl : e;
    if (!named->named)
        stacks_name_entry(s, named);
    *st = &named->st;
    return e;
}

const struct pt_stack *stacks_resolve(struct stacks *s, uint32_t slot, int tgid, int stack_id)
{
    const struct pt_stack *st = &empty;
    if (stack_id >= 0)
        stacks_resolve_entry(s, slot, tgid, stack_id, &st);
    return st;
}

void stacks_tally(struct stacks *s)
{
    /* Only keys are needed; the values land in the scratch dump too. */
    stack_maps_dump(&s->kernel, STACK_TIMES_WAITER, &s->tally_dump);
    const struct pt_stack_key *keys = s->tally_dump.keys;
    for (uint32_t i = 0; i < s->tally_dump.n; i++) {
        if (keys[i].stack_id < 0)
            continue;
        struct entry *e = lookup(s, keys[i].slot, (int)keys[i].tgid, keys[i].stack_id);
        if (e->tallied)
            continue;
        e->tallied = true;
        s->tally_n++;
        s->tally_truncated += e->truncated;
    }
}

void stacks_tallied(const struct stacks *s, uint64_t *stacks, uint64_t *truncated)
{
    *stacks = s->tally_n;
    *truncated = s->tally_truncated;
}

void stacks_free_entry(struct entry *e)
{
    if (e->tmpl && !--e->tmpl->refs)
        e->tmpl->idle_ns = monotonic_ns();
    stacks_unname(e);
    for (int i = 0; e->java && i < e->npcs; i++)
        free(e->java[i]);
    free(e->java);
    free(e->pcs);
    free(e);
}

void stacks_free(struct stacks *s)
{
    if (!s)
        return;
    /* The stacks before the templates they hold a reference to: freed in
     * bucket order, a stack met its template already freed (a write into
     * freed memory at exit; parktrace died of SIGSEGV in a CI run). */
    for (int templates = 0; templates < 2; templates++)
        for (int h = 0; h < BUCKETS; h++)
            for (struct entry **at = &s->table[h], *e; (e = *at);) {
                if ((e->slot == KSTACK_TEMPLATE) != templates) {
                    at = &e->next;
                    continue;
                }
                *at = e->next;
                stacks_free_entry(e);
            }
    free(s->retry);
    map_dump_free(&s->tally_dump);
    for (int h = 0; h < CANON_BUCKETS; h++)
        for (struct canon *c = s->canon[h], *next; c; c = next) {
            next = c->next;
            free(c);
        }
    free(s->us);
    free(s->smp);
    free(s);
}
