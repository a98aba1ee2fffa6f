#include "collapsed.h"

#include <bpf/bpf.h>
#include <inttypes.h>
#include <stdlib.h>

#include "collect.h"
#include "procmaps.h"
#include "sanitize.h"
#include "wakers.h"

/* A name can neither end the line nor split the frame: controls become
 * '?' (sanitize.h) and ';' becomes ':'. Its own line's " VALUE" always
 * comes last, which is what flamegraph.pl takes as the value. */
static void put_frame(FILE *f, const char *name)
{
    sanitize_fputs(f, name, ';', ':');
}

static void put_waiter(FILE *f, const char *root, const struct pt_stack *st, const char *leaf)
{
    put_frame(f, root);
    for (int i = st->n - 1; i >= 0; i--) {
        fputc(';', f);
        put_frame(f, st->frames[i].name);
    }
    fputs(";[", f);
    put_frame(f, leaf);
    fputc(']', f);
}

void collapsed_line(FILE *f, const char *root, const struct pt_stack *st, const char *leaf,
                    uint64_t value)
{
    put_waiter(f, root, st, leaf);
    fprintf(f, " %" PRIu64 "\n", value);
}

void collapsed_waker_line(FILE *f, const char *root, const struct pt_stack *st, const char *leaf,
                          const struct pt_stack *waker, const char *waker_root, uint64_t value)
{
    put_waiter(f, root, st, leaf);
    fputs(";--", f);
    /* As offwaketime: the waker hangs below, innermost frame first. */
    for (int i = 0; i < waker->n; i++) {
        fputc(';', f);
        put_frame(f, waker->frames[i].name);
    }
    fputc(';', f);
    put_frame(f, waker_root);
    fprintf(f, " %" PRIu64 "\n", value);
}

static const char *comm_of(int tgid, const struct blocker *b)
{
    struct pm_proc *p = procmaps_get(tgid);
    return p->comm[0] ? p->comm : b->comm;
}

static uint64_t value_of(uint64_t count, uint64_t ns, int count_value)
{
    return count_value ? count : (ns + 500) / 1000;
}

/* The waker lines: waits with a known waker, charged to (waiter stack,
 * waker stack) by the kernel and not to the waiter stack's own entry. */
static int write_wakers(FILE *f, struct collector *c, int count_value, struct wakers *w)
{
    int lines = 0;
    for (int i = 0; i < w->n; i++) {
        const struct pt_waker_key *k = &w->e[i].k;
        struct blocker *b = collector_blocker(c, k->slot);
        uint64_t value = value_of(w->e[i].count, w->e[i].ns, count_value);
        if (!b || !value)
            continue;
        collapsed_waker_line(f, comm_of((int)k->tgid, b), stacks_resolve(k->slot, (int)k->tgid, k->stack_id),
                             b->cls.cls, stacks_resolve(k->slot, (int)k->waker_tgid, k->waker_stack),
                             comm_of((int)k->waker_tgid, b), value);
        lines++;
    }
    return lines;
}

/* Without --waker, a waiter stack's line is its whole time: its own entry
 * plus its waits with a known waker. */
static void add_wakers(const struct wakers *w, const struct pt_stack_key *key, struct pt_stack_val *val)
{
    for (int i = 0; i < w->n; i++) {
        const struct pt_waker_key *k = &w->e[i].k;
        if (k->slot == key->slot && k->tgid == key->tgid && k->stack_id == key->stack_id) {
            val->count += w->e[i].count;
            val->ns += w->e[i].ns;
        }
    }
}

int collapsed_write(FILE *f, struct collector *c, int count_value, bool waker)
{
    struct pt_stack_key key, next;
    struct pt_stack_val val;
    bool first = true;
    int lines = 0;
    struct wakers w = {0};

    wakers_read(c->t->waker_time_fd, &w);
    if (waker)
        lines += write_wakers(f, c, count_value, &w);

    while (!bpf_map_get_next_key(c->t->stack_time_fd, first ? NULL : &key, &next)) {
        first = false;
        key = next;
        if (bpf_map_lookup_elem(c->t->stack_time_fd, &key, &val))
            continue;
        if (!waker)
            add_wakers(&w, &key, &val);
        struct blocker *b = val.count ? collector_blocker(c, key.slot) : NULL;
        if (!b)
            continue;
        uint64_t value = value_of(val.count, val.ns, count_value);
        if (!value)
            continue;
        collapsed_line(f, comm_of((int)key.tgid, b), stacks_resolve(key.slot, (int)key.tgid, key.stack_id),
                       b->cls.cls, value);
        lines++;
    }
    wakers_free(&w);
    return fflush(f) || ferror(f) ? -1 : lines;
}
