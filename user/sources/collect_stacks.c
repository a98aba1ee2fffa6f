/* A report's stacks and wakers: each (blocker, waiter stack) with its
 * time, the waker stacks that ended its waits, and the first stack of
 * each blocker, for --collapsed, --pprof and the top waker. */
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
#include "services.h"
#include "slot_table.h"
#include "stack_maps.h"
#include "stacks.h"
#include "symbolize.h"
#include "view.h"
#include "wakers.h"
#include "collect_parts.h"

/* Process TGID, its name copied into OUT (blocker B's when it has none). */
static const struct pm_proc *named(struct collector *c, int tgid, const struct blocker *b, char out[PT_MODEL_COMM])
{
    const struct pm_proc *p = procmaps_get(c->sv->maps, tgid);
    snprintf(out, PT_MODEL_COMM, "%s", p->comm[0] ? p->comm : b->comm);
    return p;
}

void collector_comm_of(struct collector *c, int tgid, const struct blocker *b, char out[PT_MODEL_COMM])
{
    named(c, tgid, b, out);
}

void stack_owner(struct collector *c, int tgid, const struct blocker *b, struct pt_model_stack *ms)
{
    const struct pm_proc *p = named(c, tgid, b, ms->root);
    ms->uid = p->uid;
    ms->cgroup = p->cgroup ? p->cgroup->path : NULL;
    ms->container = p->cgroup ? p->cgroup->container : NULL;
}

/* Who the stacks of blocker B (slot SLOT) wait on, for the labelled outputs. */
void stack_blocker(struct collector *c, uint32_t slot, const struct blocker *b, struct pt_model_stack *ms)
{
    const struct pt_slot *s = &c->t->slots[slot];
    ms->pid = b->pid;
    ms->kind = pt_kind_names[s->key.kind & 0xff];
    ms->wait = b->cls.wait;
    ms->name = b->name;
    snprintf(ms->id, sizeof(ms->id), "0x%llx", (unsigned long long)slot_blocker_id(s));
    ms->chain_end = collector_chain_end(c, slot);
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
    *n = 0;
    if (!s) {
        fprintf(stderr, "parktrace: out of memory for the waker table: stacks without their woken waits\n");
        return NULL;
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
bool first_stack_entry(const struct collector *c, uint32_t slot, uint32_t tgid, int32_t stack_id)
{
    const struct pt_slot *s = &c->t->slots[slot];
    return s->first_stack == stack_id && s->first_tgid == tgid;
}

/* With --stacks sampled, the weights that scale each sampled stack's
 * figures (stack_weights.h), from the waker table W and the waiter table
 * ST; NULL with every stack taken. USED: the slots handed out. */
static struct stack_weights *weigh_stacks(struct collector *c, struct pt_model *m, const struct wakers *w,
                                          const struct map_dump *st, uint32_t used)
{
    if (!c->t->stacks_sampled || stack_weights_begin(&c->weights, used) != 0)
        return NULL;
    struct stack_weights *sw = &c->weights;
    for (int i = 0; i < w->n; i++)
        stack_weights_add(sw, w->e[i].k.slot, &(struct pt_stack_val){w->e[i].line_count, w->e[i].line_ns});
    for (uint32_t i = 0; i < st->n; i++)
        stack_weights_add(sw, ((const struct pt_stack_key *)st->keys)[i].slot, (const struct pt_stack_val *)st->vals + i);
    stack_weights_end(sw, c->t->slots, used, NULL, NULL);
    m->totals.stack_time_ns = sw->sampled_ns + sw->unsampled_ns + c->retired_sampled_ns + c->retired_unsampled_ns;
    m->totals.stack_unsampled_ns = sw->unsampled_ns + c->retired_unsampled_ns;
    return sw;
}

/* --waker: each (waiter stack, waker stack) pair of W, weighted by SW. */
static void model_waker_pairs(struct collector *c, struct pt_model *m, const struct wakers *w,
                              struct stack_weights *sw)
{
    for (int i = 0; i < w->n; i++) {
        const struct pt_waker_key *k = &w->e[i].k;
        struct blocker *b = collector_blocker(c, k->slot);
        if (!b)
            continue;
        struct pt_stack_val v = {w->e[i].count, w->e[i].ns};
        if (sw)
            v = stack_weights_apply(sw, k->slot, &v, false, &c->t->slots[k->slot]);
        struct pt_model_waker *mw = model_add_waker(m);
        collector_comm_of(c, (int)k->tgid, b, mw->root);
        mw->stack = stacks_resolve(c->stacks, k->slot, (int)k->tgid, k->stack_id);
        mw->leaf = b->cls.cls;
        mw->waker = stacks_resolve(c->stacks, k->slot, (int)k->waker_tgid, k->waker_stack);
        collector_comm_of(c, (int)k->waker_tgid, b, mw->waker_root);
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
}

/* Each (blocker, waiter stack) of ST with its own waits and those whose
 * waker was seen (W), weighted by SW. */
static void model_waiter_stacks(struct collector *c, struct pt_model *m, const struct wakers *w,
                                const struct map_dump *st, struct stack_weights *sw, uint32_t used)
{
    int nsums;
    struct woken_sum *sums = woken_sums(w, &nsums);
    for (uint32_t i = 0; i < st->n; i++) {
        const struct pt_stack_key *key = (const struct pt_stack_key *)st->keys + i;
        struct pt_stack_val own = ((const struct pt_stack_val *)st->vals)[i], all = own;
        const struct woken_sum want = {key->slot, key->tgid, key->stack_id, 0, 0};
        const struct woken_sum *woken = sums ? bsearch(&want, sums, (size_t)nsums, sizeof(*sums), by_waiter) : NULL;
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
        stack_owner(c, (int)key->tgid, b, ms);
        ms->stack = stacks_resolve(c->stacks, key->slot, (int)key->tgid, key->stack_id);
        ms->leaf = b->cls.cls;
        stack_blocker(c, key->slot, b, ms);
        ms->count = all.count;
        ms->ns = all.ns;
        ms->own_count = own.count;
        ms->own_ns = own.ns;
    }
    free(sums);
}

void collector_model_stacks(struct collector *c, struct pt_model *m, const struct wakers *w, bool pairs)
{
    struct map_dump st = {0};
    m->has_stacks = true;
    m->has_wakers = pairs;
    /* The kernel's table of wait time per (blocker, process, waiter stack),
     * in its own order. */
    stack_maps_dump(&c->kernel, STACK_TIMES_WAITER, &st);
    /* Read after the dumps, so every slot in them is below it (and
     * mapped); the slots past it were never handed out, and reading them
     * too cost a pass over the whole table at every report. */
    uint32_t used = tracer_used_slots(c->t);
    struct stack_weights *sw = weigh_stacks(c, m, w, &st, used);
    if (pairs)
        model_waker_pairs(c, m, w, sw);
    model_waiter_stacks(c, m, w, &st, sw, used);
    map_dump_free(&st);
    for (int i = 0; i < c->retired.nstacks; i++)
        *model_add_stack(m) = c->retired.stacks[i];
}
