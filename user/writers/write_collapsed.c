/* Collapsed stacks for flamegraph.pl: "root;...;leaf value" per line.
 * Semicolons inside names become ':' so frames stay frames, and controls
 * '?' so a line stays a line (sanitize.h). */
#include <inttypes.h>

#include "sanitize.h"
#include "writer.h"

/* A name can neither end the line nor split the frame. Its own line's
 * " VALUE" always comes last, which is what flamegraph.pl takes as the
 * value. */
static void put_frame(FILE *f, const char *name)
{
    sanitize_fputs(f, name, ';', ':');
}

/* ROOT, then the frames of ST outermost first, then "[LEAF]". */
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

static uint64_t value_of(uint64_t count, uint64_t ns, const struct pt_write_opts *o)
{
    return o->count_value ? count : (ns + 500) / 1000;
}

/* With --waker, first every (waiter stack, waker stack) pair: the waiter
 * as above, a "--" frame, then the waker's stack innermost frame first and
 * the waker's process, as offwaketime writes it. A waiter stack's own line
 * then keeps only the waits no waker was seen for; without --waker it has
 * them all. Lines worth 0 are left out. */
int write_collapsed(FILE *f, const struct pt_model *m, const struct pt_write_opts *o)
{
    int lines = 0;
    for (int i = 0; o->waker && i < m->nwakers; i++) {
        const struct pt_model_waker *w = &m->wakers[i];
        uint64_t value = value_of(w->count, w->ns, o);
        if (!value)
            continue;
        put_waiter(f, w->root, w->stack, w->leaf);
        fputs(";--", f);
        for (int j = 0; j < w->waker->n; j++) {
            fputc(';', f);
            put_frame(f, w->waker->frames[j].name);
        }
        fputc(';', f);
        put_frame(f, w->waker_root);
        fprintf(f, " %" PRIu64 "\n", value);
        lines++;
    }
    for (int i = 0; i < m->nstacks; i++) {
        const struct pt_model_stack *s = &m->stacks[i];
        uint64_t count = o->waker ? s->own_count : s->count, ns = o->waker ? s->own_ns : s->ns;
        uint64_t value = value_of(count, ns, o);
        if (!count || !value)
            continue;
        put_waiter(f, s->root, s->stack, s->leaf);
        fprintf(f, " %" PRIu64 "\n", value);
        lines++;
    }
    return writer_flush(f) ? -1 : lines;
}
