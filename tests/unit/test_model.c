/* The snapshot model rendered by every writer (writer.h), compared byte
 * for byte with golden files under tests/golden/ (made by the writers of
 * before the model, pt_report and collapsed_write's lines, from the same
 * data). A fixed model: rows of every kind, a truncated Java stack, names
 * that need escaping, waker stacks, phases closed and open, totals with
 * drops, collapsed stacks with and without waker pairs. A mismatch prints
 * the lines that differ.
 *
 * PT_GOLDEN=DIR reads the golden files from DIR (default tests/golden, from
 * the repository's root as tests/run.sh runs); PT_GOLDEN_UPDATE=1 writes
 * them instead (then check the diff by eye before committing it). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "live_view.h"
#include "writer.h"

static struct pt_frame f_mutex[] = {{"__lll_lock_wait", "libc.so.6"}, {"pthread_mutex_lock", "libc.so.6"},
    {"worker", "mutex_contention"}, {"start_thread", "libc.so.6"}, {"__GI___clone3", "libc.so.6"}};
static struct pt_frame f_cond[] = {{"__futex_abstimed_wait_common", "libc.so.6"}, {"pthread_cond_wait", "libc.so.6"},
    {"consumer", "mutex_contention"}, {"start_thread", "libc.so.6"}, {"__GI___clone3", "libc.so.6"}};
static struct pt_frame f_java[] = {{"__futex_abstimed_wait_common", "libc.so.6"}, {"pthread_cond_wait", "libc.so.6"},
    {"Parker::park(bool, long)", "libjvm.so"}, {"Unsafe_Park", "libjvm.so"},
    {"jdk.internal.misc.Unsafe.park", "[java]"}, {"java.util.concurrent.locks.LockSupport.park", "[java]"},
    {"Demo.lambda$main$0", "[java]"}, {"java.lang.Thread.run", "[java]"}, {"[truncated]", NULL}};
static struct pt_frame f_waker[] = {{"futex_wake", "libc.so.6"}, {"pthread_mutex_unlock", "libc.so.6"},
    {"worker", "mutex_contention"}, {"start_thread", "libc.so.6"}};
static struct pt_frame f_waker2[] = {{"pthread_cond_signal", "libc.so.6"}, {"producer", "mutex_contention"},
    {"start_thread", "libc.so.6"}};
static struct pt_frame f_jwaker[] = {{"Unsafe_Unpark", "libjvm.so"}, {"java.util.concurrent.locks.LockSupport.unpark", "[java]"},
    {"Demo.release", "[java]"}};
static struct pt_frame f_odd[] = {{"evil;frame\n\x1b[31mred", "x"}, {"na\xc3\xafve \xff byte \"q\" back\\slash", "x"},
    {"std::map<int, int>::at(int const&)", "x"}};

static struct pt_stack s_mutex = {5, f_mutex, true, false, 1, false}, s_cond = {5, f_cond, true, false, 1, false},
    s_java = {9, f_java, true, true, 1, false}, s_waker = {4, f_waker, true, false, 1, false}, s_waker2 = {3, f_waker2, true, false, 1, false},
    s_jwaker = {3, f_jwaker, true, false, 1, false}, s_odd = {3, f_odd, false, false, 1, false}, s_empty = {0, NULL, false, false, 0, false};

static const char *JCLS = "java.util.concurrent.locks.ReentrantLock$NonfairSync";
static const char *ODD_COMM = "ev\x1bil;comm\nname-too-long";
static const char *ODD_CLS = "odd;class\twith a name longer than twenty-eight";

static struct pt_row rows[6];

/* Where the rows' processes live: a login session, a Docker container (its
 * JVM in its own pid namespace), and a hostile path. */
#define CTR "5f1e0123456789abcdef0123456789abcdef0123456789abcdef89abcdef0123"
static const char *CG_SESSION = "/user.slice/user-1000.slice/session-3.scope";
static const char *CG_DOCKER = "/system.slice/docker-" CTR ".scope";
static const char *CG_ODD = "/evil\n\x1b[31m.slice/a-very-long-unit-name-that-the-column-cuts.service";

static void place_rows(void)
{
    for (int i = 0; i < 6; i++) {
        struct pt_row *r = &rows[i];
        r->cgroup = r->pid == 4242 ? CG_SESSION : r->pid == 9349 ? CG_DOCKER : CG_ODD;
        r->container = r->pid == 9349 ? CTR : NULL;
        r->ns_pid = r->pid == 9349 ? 1 : 0;
    }
}

static void make_rows(void)
{
    struct pt_row *r = &rows[0];
    *r = (struct pt_row){.kind = "futex", .pid = 4242, .comm = "mutex_contentio", .id = 0x564136edd340ULL,
        .name = "cache_lock", .cls = "pthread_mutex", .wait = false, .has_csp = true, .csp = 0.35,
        .first_thread = "mutex_contentio", .first_stack = &s_mutex, .top_frame = "worker",
        .waker_stack = &s_waker, .waker_comm = "mutex_contentio", .waker_top_frame = "worker", .waker_ns = 4000000000ULL,
        .waker_wakeups = 700, .in_phase = true};
    r->fig = (struct pt_figures){.window_ns = 3010000000ULL, .parks = 737, .wakeups = 736, .timeouts = 0,
        .parked_now = 1, .peak_parked = 2, .thread_time_ns = 4420000000ULL, .real_time_ns = 3010000000ULL,
        .avg_park_ns = 5990000, .max_park_ns = 12100760, .avg_hold_ns = 4080000, .real_util = 0.997,
        .thread_util = 1.465, .real_life_util = 1, .thread_life_util = 2.4531, .threads = 4};
    r->fig.hist[21] = 1; r->fig.hist[23] = 489; r->fig.hist[24] = 247;

    r = &rows[1];
    *r = (struct pt_row){.kind = "jvm-park", .pid = 9349, .comm = "java", .id = 0x69ec72000ULL, .name = NULL,
        .cls = JCLS, .has_csp = true, .csp = 0.05, .first_thread = "pool-1-thread-1", .first_stack = &s_java,
        .top_frame = "Demo.lambda$main$0"};
    r->fig = (struct pt_figures){.window_ns = 3010000000ULL, .parks = 46, .wakeups = 45, .timeouts = 1,
        .fast_parks = 12, .peak_parked = 2, .thread_time_ns = 5850000000ULL, .real_time_ns = 2960000000ULL,
        .avg_park_ns = 127000000, .max_park_ns = 201000000, .avg_hold_ns = 65500000, .real_util = 0.938,
        .thread_util = 1.821, .real_life_util = 0.95, .thread_life_util = 1.9, .threads = 3};
    r->fig.hist[26] = 10; r->fig.hist[27] = 36;

    r = &rows[2];
    *r = (struct pt_row){.kind = "futex", .pid = 4242, .comm = "mutex_contentio", .id = 0x7f435c0162b8ULL,
        .cls = "pthread_cond", .wait = true, .first_thread = "consumer", .first_stack = &s_cond,
        .top_frame = "consumer", .waker_stack = &s_waker2, .waker_comm = "producer", .waker_top_frame = "producer", .waker_ns = 1500000000ULL,
        .waker_wakeups = 75};
    r->fig = (struct pt_figures){.window_ns = 3010000000ULL, .parks = 75, .wakeups = 75, .peak_parked = 1,
        .thread_time_ns = 1500000000ULL, .real_time_ns = 1500000000ULL, .avg_park_ns = 20100000,
        .max_park_ns = 20500000, .avg_hold_ns = 20100000, .real_util = 0.499, .thread_util = 0.499,
        .real_life_util = 0.5, .thread_life_util = 0.5, .threads = 1};
    r->fig.hist[24] = 75;

    r = &rows[3];
    *r = (struct pt_row){.kind = "jvm-wait", .pid = 9349, .comm = "java", .id = 0x69ec1a588ULL,
        .cls = "java.lang.Object", .wait = true, .first_thread = "Reference Handler", .first_stack = &s_empty,
        .top_frame = NULL};
    r->fig = (struct pt_figures){.window_ns = 3010000000ULL, .parks = 1, .parked_now = 1, .peak_parked = 1,
        .thread_time_ns = 999, .real_time_ns = 999, .threads = 1};

    r = &rows[4];
    *r = (struct pt_row){.kind = "jvm-park", .pid = 9349, .comm = "java", .id = 0, .cls = "<no blocker>",
        .wait = true, .first_thread = "main", .first_stack = &s_empty, .top_frame = "[unknown]"};
    r->fig = (struct pt_figures){.window_ns = 3010000000ULL, .parks = 2, .timeouts = 2, .peak_parked = 1,
        .thread_time_ns = 2000000, .real_time_ns = 2000000, .avg_park_ns = 1000000, .max_park_ns = 1000001,
        .avg_hold_ns = 1000000, .real_util = 0.000664, .thread_util = 0.000664, .threads = 1};
    r->fig.hist[19] = 2;

    r = &rows[5];
    *r = (struct pt_row){.kind = "jvm-monitor", .pid = 77, .comm = ODD_COMM, .id = 0xdeadbeefULL,
        .name = "name\xff;with\x01odd bytes and a long tail", .cls = ODD_CLS, .has_csp = true, .csp = 1,
        .first_thread = "thr\x7f", .first_stack = &s_odd,
        .top_frame = "a.very.long.package.name.SomeClass.someMethodWithALongName", .waker_stack = &s_odd,
        .waker_comm = "ev\x1bil;comm\nname", .waker_top_frame = "evil;frame\n\x1b[31mred", .waker_ns = 5, .waker_wakeups = 1};
    r->fig = (struct pt_figures){.window_ns = 3010000000ULL, .parks = 123456789, .peak_parked = 12345,
        .thread_time_ns = 123456789012345ULL, .real_time_ns = 1, .avg_park_ns = 1, .max_park_ns = 2,
        .avg_hold_ns = 3, .real_util = 0.00049, .thread_util = 12345.678, .real_life_util = 0.0, .threads = 99};
    r->fig.hist[0] = 1; r->fig.hist[39] = 7;
}

static struct pt_model_phase phases[3];

static void make_phases(void)
{
    phases[0] = (struct pt_model_phase){.pid = 4242, .id = 0x564136edd340ULL, .cls = "pthread_mutex", .name = "cache_lock",
        .start = {1700000000, 123000000}, .end = {1700000002, 456999999}, .open = false, .peak = 0.41,
        .mean = 0.9 / 3};
    phases[1] = (struct pt_model_phase){.pid = 9349, .id = 0x69ec72000ULL, .cls = JCLS,
        .start = {1700000001, 5000000}, .end = {0, 0}, .open = true, .peak = 0.12, .mean = 0.12 / 1};
    phases[2] = (struct pt_model_phase){.pid = 77, .id = 0xdeadbeefULL, .cls = ODD_CLS, .start = {1700000002, 0},
        .end = {1700000003, 1000000}, .open = false, .peak = 1, .mean = (2.0 / 3) / 1};
}

/* The collapsed stacks, in the kernel's table order: a waiter stack whose
 * waits were all woken by a known waker (own 0), one worth 0 us, an empty
 * stack; a waker pair whose waiter stack has no entry of its own, and one
 * worth 0 us. */
static struct pt_model_stack stacks[5];
static struct pt_model_waker wakers[4];

static void make_stacks(void)
{
    stacks[0] = (struct pt_model_stack){"mutex_contentio", &s_mutex, "pthread_mutex", .count = 737,
                                        .ns = 4420000000ULL, .own_count = 500, .own_ns = 3000000000ULL};
    stacks[1] = (struct pt_model_stack){"java", &s_java, JCLS, .count = 46, .ns = 5850000000ULL, .own_count = 46,
                                        .own_ns = 5850000000ULL};
    stacks[2] = (struct pt_model_stack){"mutex_contentio", &s_cond, "pthread_cond", .count = 75,
                                        .ns = 1500000000ULL};
    stacks[3] = (struct pt_model_stack){"ev\x1bil;comm\nname", &s_odd, ODD_CLS, .count = 3, .ns = 499,
                                        .own_count = 3, .own_ns = 499};
    stacks[4] = (struct pt_model_stack){"idle", &s_empty, "futex", .count = 1, .ns = 1500, .own_count = 1,
                                        .own_ns = 1500};
    wakers[0] = (struct pt_model_waker){"mutex_contentio", &s_mutex, "pthread_mutex", &s_waker, "mutex_contentio",
                                        237, 1420000000ULL, .kind = "futex"};
    wakers[1] = (struct pt_model_waker){"mutex_contentio", &s_cond, "pthread_cond", &s_waker2, "producer", 75,
                                        1500000000ULL, .kind = "futex", .wait = true};
    wakers[2] = (struct pt_model_waker){"java", &s_java, JCLS, &s_jwaker, "java", 5, 2000, .kind = "jvm-park"};
    wakers[3] = (struct pt_model_waker){"java", &s_java, JCLS, &s_jwaker, "ev\x1bil;comm\nname", 1, 100,
                                        .kind = "jvm-park"};
}

/* Wait chains: a mutex chain that ends in I/O, crossing processes, with a
 * hostile thread name; and a two-thread cycle. */
static struct pt_model_chain chains[2];

static void make_chains(void)
{
    chains[0] = (struct pt_model_chain){.time_ns = 12300000000ULL, .waits = 41, .end = "io", .end_frame = NULL,
                                        .nlinks = 3};
    chains[0].links[0] = (struct pt_model_chain_link){.pid = 4242, .comm = "mutex_contentio", .thread = "worker",
        .kind = "futex", .cls = "pthread_mutex", .name = "cache_lock", .top_frame = "worker", .id = 0x564136edd340ULL};
    chains[0].links[1] = (struct pt_model_chain_link){.pid = 77, .comm = "ev\x1bil;comm\nname", .thread = "fl\x1b[31m",
        .kind = "futex", .cls = "pthread_mutex", .name = NULL, .top_frame = "journal", .id = 0xdeadbeefULL};
    chains[0].links[2] = (struct pt_model_chain_link){.pid = 77, .comm = "ev\x1bil;comm\nname", .thread = "writer"};
    chains[1] = (struct pt_model_chain){.time_ns = 998000000ULL, .waits = 20, .cycle = true, .end = "cycle",
                                        .nlinks = 2};
    chains[1].links[0] = (struct pt_model_chain_link){.pid = 4242, .comm = "mutex_contentio", .thread = "locker1",
        .kind = "futex", .cls = "pthread_mutex", .top_frame = "locker", .id = 0x10};
    chains[1].links[1] = (struct pt_model_chain_link){.pid = 4242, .comm = "mutex_contentio", .thread = "",
        .kind = "futex", .cls = "pthread_mutex", .top_frame = "locker", .id = 0x20};
}

static void model(struct pt_model *m, enum pt_report_type type, int nrows, int nphases)
{
    memset(m, 0, sizeof(*m));
    m->type = type;
    m->wall = (struct timespec){1700000003, 789000000};
    m->window_ns = type == PT_REPORT_INTERVAL ? 1000000000ULL : 3010000000ULL;
    m->totals = (struct pt_totals){.waits = 5132, .blockers = 9, .dropped_events = 3, .dropped_stacks = 1,
                                   .stacks = 17, .truncated_stacks = 2,
                                   .live_blockers = 7, .recycled_blockers = 60000};
    m->sees_fast_parks = type == PT_REPORT_FINAL;
    m->rows = rows;
    m->nrows = nrows;
    m->phases = phases;
    m->nphases = nphases;
    m->has_stacks = true;
    m->stacks = stacks;
    m->nstacks = 5;
    m->wakers = wakers;
    m->nwakers = 4;
    m->has_chains = nrows > 0;
    m->chains = chains;
    m->nchains = nrows > 0 ? 2 : 0;
}

typedef int (*writer_fn)(FILE *, const struct pt_model *, const struct pt_write_opts *);

/* Output so far, held in memory. */
struct out {
    char *buf;
    size_t len;
    FILE *f;
};

static void render(struct out *o, writer_fn w, enum pt_report_type type, int nrows, int nphases,
                   const struct pt_write_opts *opts, int want_rc)
{
    struct pt_model m;
    model(&m, type, nrows, nphases);
    int rc = w(o->f, &m, opts);
    REQUIRE(rc == want_rc, "a writer returned %d, not %d", rc, want_rc);
}

/* The live view at a fixed size, sort and idle choice (live_view.h). */
static struct live_view live = {.cols = 100, .rows = 12, .sort = PT_RANK_TIME, .keys = true};

static int write_live_fixed(FILE *f, const struct pt_model *m, const struct pt_write_opts *o)
{
    (void)o;
    return write_live(f, m, &live);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 > cap) {
            cap = cap ? 2 * cap : 65536;
            buf = realloc(buf, cap + 1);
        }
        size_t n = fread(buf + *len, 1, 4096, f);
        *len += n;
        if (n < 4096)
            break;
    }
    fclose(f);
    buf[*len] = '\0';
    return buf;
}

/* Line I (from 1) of S: its start, and its length without the newline. */
static const char *line_at(const char *s, size_t len, int i, size_t *n)
{
    const char *p = s, *end = s + len;
    for (int k = 1; k < i && p < end; k++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    if (p >= end)
        return NULL;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    return p;
}

/* Prints the lines that differ, "-" the golden, "+" what was written, with
 * control bytes shown as \xNN; at most a few. */
static void show_line(char sign, int no, const char *p, size_t n)
{
    printf("  %c%4d: ", sign, no);
    if (!p) {
        puts("(no line)");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f)
            printf("\\x%02x", c);
        else
            putchar(c);
    }
    putchar('\n');
}

static void diff(const char *want, size_t wlen, const char *got, size_t glen)
{
    int shown = 0;
    for (int i = 1; shown < 5; i++) {
        size_t wn = 0, gn = 0;
        const char *w = line_at(want, wlen, i, &wn), *g = line_at(got, glen, i, &gn);
        if (!w && !g)
            break;
        if (w && g && wn == gn && memcmp(w, g, wn) == 0)
            continue;
        show_line('-', i, w, wn);
        show_line('+', i, g, gn);
        shown++;
    }
    if (wlen != glen)
        printf("  (golden %zu bytes, written %zu)\n", wlen, glen);
}

static void compare(struct out *o, const char *name)
{
    fclose(o->f);
    const char *dir = getenv("PT_GOLDEN") ? getenv("PT_GOLDEN") : "tests/golden";
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (getenv("PT_GOLDEN_UPDATE")) {
        FILE *f = fopen(path, "wb");
        if (REQUIRE(f && fwrite(o->buf, 1, o->len, f) == o->len && fclose(f) == 0, "cannot write %s", path))
            printf("INFO wrote %s\n", path);
        free(o->buf);
        return;
    }
    size_t len = 0;
    char *want = slurp(path, &len);
    if (!REQUIRE(want, "cannot read %s (run from the repository's root, or set PT_GOLDEN)", path)) {
        free(o->buf);
        return;
    }
    bool same = len == o->len && memcmp(want, o->buf, len) == 0;
    CHECK(same, "%s: the writers' output is the golden file byte for byte", name);
    if (!same)
        diff(want, len, o->buf, o->len);
    free(want);
    free(o->buf);
}

static void start(struct out *o)
{
    o->buf = NULL;
    o->len = 0;
    o->f = open_memstream(&o->buf, &o->len);
}

int main(void)
{
    /* Phase times are local: the golden files are in UTC. */
    setenv("TZ", "UTC", 1);
    tzset();
    make_rows();
    place_rows();
    make_phases();
    make_stacks();
    make_chains();
    const struct pt_write_opts none = {0};
    struct out o;

    start(&o);
    render(&o, write_text, PT_REPORT_INTERVAL, 6, 3, &none, 0);
    render(&o, write_text, PT_REPORT_FINAL, 6, 3, &none, 0);
    render(&o, write_text, PT_REPORT_DUMP, 2, 0, &none, 0);
    render(&o, write_text, PT_REPORT_FINAL, 0, 3, &none, 0);   /* no rows: no phase lines either */
    compare(&o, "text.txt");

    /* The live view at 100 and 80 columns, sorted by thread time then by
     * parks, idle rows hidden then shown, and with no rows. */
    start(&o);
    render(&o, write_live_fixed, PT_REPORT_INTERVAL, 6, 3, &none, 0);
    live.cols = 80;
    live.sort = PT_RANK_PARKS;
    live.show_idle = true;
    render(&o, write_live_fixed, PT_REPORT_INTERVAL, 6, 3, &none, 0);
    live.help = true;
    render(&o, write_live_fixed, PT_REPORT_INTERVAL, 6, 3, &none, 0);
    live.help = false;
    render(&o, write_live_fixed, PT_REPORT_INTERVAL, 0, 0, &none, 0);
    live_view_free(&live);
    compare(&o, "live.txt");

    start(&o);
    render(&o, write_json, PT_REPORT_INTERVAL, 6, 3, &none, 0);
    render(&o, write_json, PT_REPORT_FINAL, 6, 3, &none, 0);
    render(&o, write_json, PT_REPORT_DUMP, 2, 0, &none, 0);
    render(&o, write_json, PT_REPORT_FINAL, 0, 0, &none, 0);
    compare(&o, "json.jsonl");

    /* The phase lines alone are the text report's last lines. */
    start(&o);
    render(&o, write_phases, PT_REPORT_INTERVAL, 6, 3, &none, 0);
    compare(&o, "phases.txt");

    static const struct {
        const char *file;
        struct pt_write_opts o;
        int lines;
    } collapsed[] = {
        {"collapsed_time.folded", {.count_value = false, .waker = false}, 4},
        {"collapsed_count.folded", {.count_value = true, .waker = false}, 5},
        {"collapsed_waker_time.folded", {.count_value = false, .waker = true}, 6},
        {"collapsed_waker_count.folded", {.count_value = true, .waker = true}, 8},
    };
    for (size_t i = 0; i < sizeof(collapsed) / sizeof(collapsed[0]); i++) {
        start(&o);
        render(&o, write_collapsed, PT_REPORT_FINAL, 6, 3, &collapsed[i].o, collapsed[i].lines);
        compare(&o, collapsed[i].file);
    }

    /* The sampled part of the stack time: random walks stand for more than
     * their own time, an estimate that may overshoot; it is held to the
     * stack time the stacks hold. */
    struct pt_totals t = {.stack_time_ns = 1000, .stack_unsampled_ns = 200, .stack_sampled_ns = 400};
    CHECK(model_stack_sampled_pct(&t) == 40.0, "sampled 400 of 1000 ns: 40%%, got %g", model_stack_sampled_pct(&t));
    t.stack_sampled_ns = 5000;
    CHECK(model_stack_sampled_pct(&t) == 80.0, "sampled over the 800 ns the stacks hold: 80%%, got %g",
          model_stack_sampled_pct(&t));
    t.stack_time_ns = t.stack_unsampled_ns = 0;
    CHECK(model_stack_sampled_pct(&t) == 0.0, "no stack time: 0%%, got %g", model_stack_sampled_pct(&t));
    return CHECK_DONE();
}
