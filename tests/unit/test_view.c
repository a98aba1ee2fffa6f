/* The rows a report shows never change what was counted: for every --by,
 * --top and ranking key, the rows shown and the totals' rest add up to
 * what the window's rows held, and with every row shown each (pid, kind,
 * class) keeps its waits and time under --by object and --by class
 * (metrics.md, "Sampling never changes a count or a time"). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "view.h"

#define NROWS 600
static const char *const kinds[] = {"futex", "jvm-park"};
static const char *const classes[] = {"A", "B", "C", "pthread_cond"};
static const char *const sites[] = {"Site.a", "Site.b", "Site.c"};

/* A window's rows: many small blockers over a few sites, a few heavy
 * ones, some idle, some condition-variable word pairs. */
static void make_rows(struct pt_row *rows, unsigned seed)
{
    srand(seed);
    for (int i = 0; i < NROWS; i++) {
        struct pt_row *r = &rows[i];
        memset(r, 0, sizeof(*r));
        r->pid = 100 + rand() % 3;
        r->kind = kinds[rand() % 2];
        r->cls = classes[rand() % 4];
        r->top_frame = sites[rand() % 3];
        r->id = 0x1000 + (uint64_t)(i / 2) * 8 + (uint64_t)(i % 2) * 4;   /* word pairs for pthread_cond */
        r->objects = 1;
        r->idle = rand() % 7 == 0;
        r->wait = rand() % 2;
        r->src = (uint32_t)i;
        r->fig.parks = 1 + (uint64_t)(rand() % 50);
        r->fig.thread_time_ns = (uint64_t)(rand() % 1000) * (i % 97 == 0 ? 1000000 : 1000);
        r->fig.real_time_ns = r->fig.thread_time_ns / 2;
        r->fig.window_ns = 1000000000;
        r->fig.peak_parked = 1;
        r->has_csp = !r->wait;
        r->csp = r->has_csp ? (double)(rand() % 100) / 1000 : 0;
    }
}

struct sums {
    uint64_t parks, ns, objects;
};

static struct sums sum_rows(const struct pt_row *rows, int n, const char *pid_kind_class)
{
    struct sums s = {0};
    char key[128];
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "%d/%s/%s", rows[i].pid, rows[i].kind, rows[i].cls);
        if (pid_kind_class && strcmp(key, pid_kind_class) != 0)
            continue;
        s.parks += rows[i].fig.parks;
        s.ns += rows[i].fig.thread_time_ns;
        s.objects += rows[i].objects;
    }
    return s;
}

/* Shapes a fresh copy of the rows of SEED; the model in M, the input's
 * sums in IN (the condition variables' word pairs count as one blocker). */
static void shape(unsigned seed, enum pt_group by, int top, enum pt_rank_key key, struct pt_model *m,
                  struct pt_row *rows, struct pt_row *sorted, struct pt_row **order, struct sums *in)
{
    make_rows(rows, seed);
    memset(m, 0, sizeof(*m));
    m->rows = rows;
    m->nrows = NROWS;
    *in = sum_rows(rows, NROWS, NULL);
    m->totals.waits = in->parks;
    m->totals.thread_time_ns = in->ns;
    m->totals.blockers = in->objects;
    view_rows(m, by, top, key, true, order, sorted);
    /* merge_object_parts counts a pair as one blocker: so do the totals. */
    in->objects = m->totals.blockers;
}

static const char *const by_names[] = {"object", "class", "site"};

static void rows_and_rest_add_up(void)
{
    static struct pt_row rows[NROWS], sorted[NROWS];
    static struct pt_row *order[NROWS];
    const int tops[] = {0, 1, 3, 20};
    int bad = 0, runs = 0;
    for (unsigned seed = 1; seed <= 5; seed++)
        for (int by = PT_BY_OBJECT; by <= PT_BY_SITE; by++)
            for (size_t t = 0; t < sizeof(tops) / sizeof(tops[0]); t++)
                for (int key = 0; key < PT_RANK_COUNT; key++) {
                    struct pt_model m;
                    struct sums in;
                    shape(seed, (enum pt_group)by, tops[t], (enum pt_rank_key)key, &m, rows, sorted, order, &in);
                    struct sums out = sum_rows(m.rows, m.nrows, NULL);
                    const struct pt_rest *r = &m.totals.rest;
                    runs++;
                    if (out.parks + r->parks != in.parks || out.ns + r->thread_time_ns != in.ns ||
                        out.objects + r->objects != in.objects || (tops[t] && m.nrows > tops[t])) {
                        if (!bad++)
                            printf("INFO seed %u --by %s --top %d key %d: shown %llu parks %llu ns %llu objects, "
                                   "rest %llu/%llu/%llu, in %llu/%llu/%llu\n",
                                   seed, by_names[by], tops[t], key, (unsigned long long)out.parks,
                                   (unsigned long long)out.ns, (unsigned long long)out.objects,
                                   (unsigned long long)r->parks, (unsigned long long)r->thread_time_ns,
                                   (unsigned long long)r->objects, (unsigned long long)in.parks,
                                   (unsigned long long)in.ns, (unsigned long long)in.objects);
                    }
                }
    CHECK(!bad, "the rows shown and the rest add up to the window's rows (parks, time, objects) in %d of %d "
                "shapes (--by, --top, key)", runs - bad, runs);
}

static void classes_keep_their_totals(void)
{
    static struct pt_row rows[NROWS], sorted[NROWS];
    static struct pt_row *order[NROWS];
    int bad = 0, runs = 0;
    for (unsigned seed = 1; seed <= 5; seed++)
        for (int pid = 100; pid < 103; pid++)
            for (int k = 0; k < 2; k++)
                for (int c = 0; c < 4; c++) {
                    char key[128];
                    snprintf(key, sizeof(key), "%d/%s/%s", pid, kinds[k], classes[c]);
                    struct pt_model m;
                    struct sums in, got[2];
                    for (int by = PT_BY_OBJECT; by <= PT_BY_CLASS; by++) {
                        shape(seed, (enum pt_group)by, 0, PT_RANK_TIME, &m, rows, sorted, order, &in);
                        got[by] = sum_rows(m.rows, m.nrows, key);
                    }
                    make_rows(rows, seed);
                    struct sums want = sum_rows(rows, NROWS, key);
                    runs++;
                    for (int by = 0; by < 2; by++)
                        if (got[by].parks != want.parks || got[by].ns != want.ns) {
                            if (!bad++)
                                printf("INFO %s --by %s: %llu parks %llu ns, want %llu %llu\n", key, by_names[by],
                                       (unsigned long long)got[by].parks, (unsigned long long)got[by].ns,
                                       (unsigned long long)want.parks, (unsigned long long)want.ns);
                        }
                }
    CHECK(!bad, "with every row shown, each (pid, kind, class) keeps its waits and time under --by object and "
                "--by class (%d of %d)", runs - bad, runs);
}

int main(void)
{
    rows_and_rest_add_up();
    classes_keep_their_totals();
    return CHECK_DONE();
}
