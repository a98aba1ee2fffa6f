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

#define LABELS 9   /* kind, class, role, blocker, comm, pid, and cgroup, container and chain_end where known */

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
    size_t n = 6;
    if (s->cgroup)
        label_str(p, &labels[n++], "cgroup", s->cgroup);
    if (s->container)
        label_str(p, &labels[n++], "container", s->container);
    if (s->chain_end)
        label_str(p, &labels[n++], "chain_end", s->chain_end);
    for (size_t i = 0; i < n; i++)
        label_ptrs[i] = &labels[i];
    sm->n_label = n;
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

/* The samples' arrays, one entry per model stack (and waker pair) and
 * their values and labels. */
struct sample_arrays {
    size_t n;
    PtPprof__Sample *samples, **ptrs;
    int64_t *values;
    PtPprof__Label *labels, **label_ptrs;
};

static int samples_alloc(struct sample_arrays *a, size_t n)
{
    a->n = n;
    a->samples = calloc(n, sizeof(*a->samples));
    a->ptrs = calloc(n, sizeof(*a->ptrs));
    a->values = calloc(2 * n, sizeof(*a->values));
    a->labels = calloc(LABELS * n, sizeof(*a->labels));
    a->label_ptrs = calloc(LABELS * n, sizeof(*a->label_ptrs));
    return a->samples && a->ptrs && a->values && a->labels && a->label_ptrs ? 0 : -1;
}

/* USED: the samples filled, whose locations were allocated. */
static void samples_free(struct sample_arrays *a, size_t used)
{
    for (size_t i = 0; a->samples && i < used + 1 && i < a->n; i++)
        free(a->samples[i].location_id);
    free(a->samples);
    free(a->ptrs);
    free(a->values);
    free(a->labels);
    free(a->label_ptrs);
}

/* One sample per model stack (and, with locks_only, per waker pair). */
static int add_samples(struct pprof *p, PtPprof__Profile *prof, struct sample_arrays *a, const struct pt_model *m,
                       const struct pt_write_opts *o)
{
    for (size_t i = 0; i + 1 < a->n; i++) {
        struct pt_model_stack s;
        if (!sample_of(m, o, i, &s))
            continue;
        size_t k = prof->n_sample;
        if (fill_sample(p, &a->samples[k], &s, &a->values[2 * k], &a->labels[LABELS * k], &a->label_ptrs[LABELS * k]))
            return -1;
        a->ptrs[k] = &a->samples[k];
        prof->n_sample++;
    }
    prof->sample = a->ptrs;
    return 0;
}

/* The functions and locations, one each per frame name; pointers only
 * now, as the arrays may have moved while growing. */
static int link_functions(struct pprof *p, PtPprof__Profile *prof, PtPprof__Function ***funcs,
                          PtPprof__Location ***locs)
{
    *funcs = calloc(p->nfuncs + 1, sizeof(**funcs));
    *locs = calloc(p->nfuncs + 1, sizeof(**locs));
    p->line_ptrs = calloc(p->nfuncs + 1, sizeof(*p->line_ptrs));
    if (!*funcs || !*locs || !p->line_ptrs)
        return -1;
    for (size_t i = 0; i < p->nfuncs; i++) {
        (*funcs)[i] = &p->funcs[i];
        p->line_ptrs[i] = &p->lines[i];
        p->locs[i].n_line = 1;
        p->locs[i].line = &p->line_ptrs[i];
        (*locs)[i] = &p->locs[i];
    }
    prof->n_function = prof->n_location = p->nfuncs;
    prof->function = *funcs;
    prof->location = *locs;
    prof->n_string_table = p->str.n;
    prof->string_table = p->str.v;
    return 0;
}

/* PROF packed, compressed and written to F. 0, or -1 with errno. */
static int pack_and_write(FILE *f, const PtPprof__Profile *prof)
{
    size_t len = pt_pprof__profile__get_packed_size(prof);
    uint8_t *packed = malloc(len ? len : 1);
    if (!packed)
        return -1;
    pt_pprof__profile__pack(prof, packed);
    int rc = gzip_write(f, packed, len) == 0 && writer_flush(f) == 0 ? 0 : -1;
    int err = errno;
    free(packed);
    errno = err;
    return rc;
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
    struct sample_arrays a = {0};
    PtPprof__Function **funcs = NULL;
    PtPprof__Location **locs = NULL;
    int rc = -1;
    if (samples_alloc(&a, n) == 0 && add_samples(&p, &prof, &a, m, o) == 0 &&
        link_functions(&p, &prof, &funcs, &locs) == 0)
        rc = pack_and_write(f, &prof);
    if (rc && (p.oom || !errno))
        errno = ENOMEM;
    int err = errno;
    samples_free(&a, prof.n_sample);
    free(funcs);
    free(locs);
    free(p.line_ptrs);
    free(p.funcs);
    free(p.locs);
    free(p.lines);
    pprof_strings_free(&p.str);
    errno = err;
    return rc;
}
