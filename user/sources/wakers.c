#include "wakers.h"

#include <bpf/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

void wakers_read(int fd, struct wakers *w)
{
    struct pt_waker_key key, next;
    struct pt_stack_val val;
    int cap = 0;
    bool first = true;
    memset(w, 0, sizeof(*w));
    while (fd >= 0 && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
        first = false;
        key = next;
        if (bpf_map_lookup_elem(fd, &key, &val) || !val.count)
            continue;
        if (w->n == cap) {
            cap = cap ? 2 * cap : 256;
            w->e = realloc(w->e, (size_t)cap * sizeof(*w->e));
        }
        w->e[w->n++] = (struct waker_entry){key, val.count, val.ns};
    }
}

static int by_waker(const void *a, const void *b)
{
    const struct pt_waker_key *x = &((const struct waker_entry *)a)->k, *y = &((const struct waker_entry *)b)->k;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    if (x->waker_tgid != y->waker_tgid)
        return x->waker_tgid < y->waker_tgid ? -1 : 1;
    return x->waker_stack < y->waker_stack ? -1 : x->waker_stack > y->waker_stack;
}

void wakers_top(struct wakers *w, struct stacks *stacks, uint32_t nslots, struct waker_entry *top)
{
    memset(top, 0, (size_t)nslots * sizeof(*top));
    /* Waker stacks that read the same are one call path. */
    for (int i = 0; i < w->n; i++)
        w->e[i].k.waker_stack = stacks_canonical(stacks, w->e[i].k.slot, (int)w->e[i].k.waker_tgid, w->e[i].k.waker_stack);
    qsort(w->e, (size_t)w->n, sizeof(*w->e), by_waker);
    for (int i = 0, j; i < w->n; i = j) {
        /* One run per (blocker, waker stack): its total over waiter stacks. */
        struct waker_entry sum = w->e[i];
        for (j = i + 1; j < w->n && by_waker(&w->e[i], &w->e[j]) == 0; j++) {
            sum.ns += w->e[j].ns;
            sum.count += w->e[j].count;
        }
        if (sum.k.slot < nslots && sum.ns >= top[sum.k.slot].ns)
            top[sum.k.slot] = sum;
    }
}

void wakers_free(struct wakers *w)
{
    free(w->e);
    memset(w, 0, sizeof(*w));
}
