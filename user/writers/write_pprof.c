/* A pprof contention profile (docs/contract/cli.md, "pprof") over the model's
 * stacks: Go's shape, so go tool pprof, Pyroscope and Parca read it as it
 * is. One sample per (waiter stack, blocker) with [waits, ns waited], the
 * same stacks and weights as the collapsed output: its root (the process)
 * and frames, then the blocker's class as the leaf frame. Encoded by
 * libprotobuf-c from proto/profile.proto, gzip-compressed by zlib. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gzip_out.h"
#include "pprof_strings.h"
#include "profile.pb-c.h"
#include "writer.h"

#define LABELS 6   /* kind, class, role, blocker, comm, pid */

struct pprof {
    struct pprof_strings str;
    PtPprof__Function *funcs;
    PtPprof__Location *locs;
    PtPprof__Line *lines;
    PtPprof__Line **line_ptrs;    /* one per location, pointing into lines */
    size_t nfuncs, cap;
    bool oom;
};

static int64_t str(struct pprof *p, const char *s)
{
    int64_t i = pprof_string(&p->str, s);
    if (i < 0) {
        p->oom = true;
        return 0;
    }
    return i;
}

/* The location of frame NAME: one function and one location per distinct
 * name, sharing their id (ids start at 1; 0 is "none" in the format). */
static uint64_t location(struct pprof *p, const char *name)
{
    int64_t s = str(p, name);
    if (p->oom)
        return 0;
    if (p->str.func[s])
        return p->str.func[s];
    if (p->nfuncs == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        void *f = realloc(p->funcs, cap * sizeof(*p->funcs)), *l = realloc(p->locs, cap * sizeof(*p->locs));
        void *ln = realloc(p->lines, cap * sizeof(*p->lines));
        if (f)
            p->funcs = f;
        if (l)
            p->locs = l;
        if (ln)
            p->lines = ln;
        if (!f || !l || !ln) {
            p->oom = true;
            return 0;
        }
        p->cap = cap;
    }
    uint64_t id = p->nfuncs + 1;
    PtPprof__Function *f = &p->funcs[p->nfuncs];
    pt_pprof__function__init(f);
    f->id = id;
    f->name = f->system_name = s;
    PtPprof__Line *ln = &p->lines[p->nfuncs];
    pt_pprof__line__init(ln);
    ln->function_id = id;
    PtPprof__Location *l = &p->locs[p->nfuncs];
    pt_pprof__location__init(l);
    l->id = id;
    p->nfuncs++;
    p->str.func[s] = id;
    return id;
}

static void label_str(struct pprof *p, PtPprof__Label *l, const char *key, const char *value)
{
    pt_pprof__label__init(l);
    l->key = str(p, key);
    l->str = str(p, value ? value : "");
}

/* Fills sample SM from the model stack S: leaf first, as the format wants,
 * so the class, the frames innermost first, then the process. */
static int fill_sample(struct pprof *p, PtPprof__Sample *sm, const struct pt_model_stack *s, int64_t *values,
                       PtPprof__Label *labels, PtPprof__Label **label_ptrs)
{
    char leaf[300];
    pt_pprof__sample__init(sm);
    sm->location_id = malloc((size_t)(s->stack->n + 2) * sizeof(*sm->location_id));
    if (!sm->location_id)
        return -1;
    snprintf(leaf, sizeof(leaf), "[%s]", s->leaf);
    sm->location_id[sm->n_location_id++] = location(p, leaf);
    for (int i = 0; i < s->stack->n; i++)
        sm->location_id[sm->n_location_id++] = location(p, s->stack->frames[i].name);
    sm->location_id[sm->n_location_id++] = location(p, s->root);
    values[0] = (int64_t)s->count;
    values[1] = (int64_t)s->ns;
    sm->n_value = 2;
    sm->value = values;
    label_str(p, &labels[0], "kind", s->kind);
    label_str(p, &labels[1], "class", s->leaf);
    label_str(p, &labels[2], "role", s->wait ? "wait" : "lock");
    label_str(p, &labels[3], "blocker", s->name ? s->name : s->id);
    label_str(p, &labels[4], "comm", s->root);
    pt_pprof__label__init(&labels[5]);
    labels[5].key = str(p, "pid");
    labels[5].num = s->pid;
    for (int i = 0; i < LABELS; i++)
        label_ptrs[i] = &labels[i];
    sm->n_label = LABELS;
    sm->label = label_ptrs;
    return p->oom ? -1 : 0;
}

static PtPprof__ValueType value_type(struct pprof *p, const char *type, const char *unit)
{
    PtPprof__ValueType v;
    pt_pprof__value_type__init(&v);
    v.type = str(p, type);
    v.unit = str(p, unit);
    return v;
}

/* Sample I of the profile into S, false when there is none: the waiter
 * stacks, then, for /debug/pprof/mutex, the waker pairs. Go's mutex
 * profile charges a lock's delay to the stack that released it (cli.md):
 * there a lock's waits with a known waker go to the waker's stack, and
 * only the rest (no waker seen, or its stack left out) stay on the
 * waiter's; a recycled blocker's pairs are not kept, so its waits stay on
 * the waiter's stack. */
static bool sample_of(const struct pt_model *m, const struct pt_write_opts *o, size_t i, struct pt_model_stack *s)
{
    if (i < (size_t)(m->nstacks > 0 ? m->nstacks : 0)) {
        *s = m->stacks[i];
        if (o->locks_only) {
            if (s->wait)
                return false;
            if (m->has_wakers && strcmp(s->id, "[recycled]") != 0) {
                s->count = s->own_count;
                s->ns = s->own_ns;
            }
        }
        return s->count != 0;
    }
    const struct pt_model_waker *w = &m->wakers[i - (size_t)m->nstacks];
    if (w->wait || !w->count)
        return false;
    memset(s, 0, sizeof(*s));
    memcpy(s->root, w->waker_root, sizeof(s->root));
    s->stack = w->waker;
    s->leaf = w->leaf;
    s->count = w->count;
    s->ns = w->ns;
    s->pid = w->pid;
    s->kind = w->kind;
    s->wait = w->wait;
    s->name = w->name;
    memcpy(s->id, w->id, sizeof(s->id));
    return true;
}

/* The whole profile built, packed and compressed; every allocation freed
 * at the one exit. */
int write_pprof(FILE *f, const struct pt_model *m, const struct pt_write_opts *o)
{
    struct pprof p = {0};
    PtPprof__Profile prof;
    pt_pprof__profile__init(&prof);
    str(&p, "");   /* index 0 */
    PtPprof__ValueType types[2] = {value_type(&p, "contentions", "count"), value_type(&p, "delay", "nanoseconds")};
    PtPprof__ValueType *type_ptrs[2] = {&types[0], &types[1]};
    PtPprof__ValueType period = value_type(&p, "contentions", "count");
    prof.n_sample_type = 2;
    prof.sample_type = type_ptrs;
    prof.period_type = &period;
    prof.period = 1;
    /* The window the stacks cover: the final model's is the run; an
     * interval's stacks still cover the run, so, as Go's runtime does for
     * its cumulative profiles, only the time taken is said. */
    int64_t end = (int64_t)m->wall.tv_sec * 1000000000LL + m->wall.tv_nsec;
    prof.time_nanos = o->since_start ? end : end - (int64_t)m->window_ns;
    prof.duration_nanos = o->since_start ? 0 : (int64_t)m->window_ns;

    size_t n = (size_t)(m->nstacks > 0 ? m->nstacks : 0) + (o->locks_only ? (size_t)m->nwakers : 0) + 1;
    PtPprof__Sample *samples = calloc(n, sizeof(*samples));
    PtPprof__Sample **sample_ptrs = calloc(n, sizeof(*sample_ptrs));
    int64_t *values = calloc(2 * n, sizeof(*values));
    PtPprof__Label *labels = calloc(LABELS * n, sizeof(*labels));
    PtPprof__Label **label_ptrs = calloc(LABELS * n, sizeof(*label_ptrs));
    PtPprof__Function **func_ptrs = NULL;
    PtPprof__Location **loc_ptrs = NULL;
    uint8_t *packed = NULL;
    int rc = -1;
    if (!samples || !sample_ptrs || !values || !labels || !label_ptrs)
        goto out;
    for (size_t i = 0; i + 1 < n; i++) {
        struct pt_model_stack s;
        if (!sample_of(m, o, i, &s))
            continue;
        size_t k = prof.n_sample;
        if (fill_sample(&p, &samples[k], &s, &values[2 * k], &labels[LABELS * k], &label_ptrs[LABELS * k]))
            goto out;
        sample_ptrs[k] = &samples[k];
        prof.n_sample++;
    }
    prof.sample = sample_ptrs;
    func_ptrs = calloc(p.nfuncs + 1, sizeof(*func_ptrs));
    loc_ptrs = calloc(p.nfuncs + 1, sizeof(*loc_ptrs));
    p.line_ptrs = calloc(p.nfuncs + 1, sizeof(*p.line_ptrs));
    if (!func_ptrs || !loc_ptrs || !p.line_ptrs)
        goto out;
    /* Pointers only now: the arrays above may have moved while growing. */
    for (size_t i = 0; i < p.nfuncs; i++) {
        func_ptrs[i] = &p.funcs[i];
        p.line_ptrs[i] = &p.lines[i];
        p.locs[i].n_line = 1;
        p.locs[i].line = &p.line_ptrs[i];
        loc_ptrs[i] = &p.locs[i];
    }
    prof.n_function = prof.n_location = p.nfuncs;
    prof.function = func_ptrs;
    prof.location = loc_ptrs;
    prof.n_string_table = p.str.n;
    prof.string_table = p.str.v;
    size_t len = pt_pprof__profile__get_packed_size(&prof);
    packed = malloc(len ? len : 1);
    if (!packed)
        goto out;
    pt_pprof__profile__pack(&prof, packed);
    if (gzip_write(f, packed, len) == 0 && writer_flush(f) == 0)
        rc = 0;
out:
    if (rc && (p.oom || !errno))
        errno = ENOMEM;
    int err = errno;
    for (size_t i = 0; samples && i < prof.n_sample + 1 && i < n; i++)
        free(samples[i].location_id);
    free(samples);
    free(sample_ptrs);
    free(values);
    free(labels);
    free(label_ptrs);
    free(func_ptrs);
    free(loc_ptrs);
    free(p.line_ptrs);
    free(p.funcs);
    free(p.locs);
    free(p.lines);
    free(packed);
    pprof_strings_free(&p.str);
    errno = err;
    return rc;
}
