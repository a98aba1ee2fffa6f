/* The live view's columns (live_columns.h): at every width from 40 to 250
 * a line fits, the columns that always stay are there, columns leave in
 * the documented order and come back as the width grows; Java names lose
 * the middle of their package, keeping Class.method. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "live_columns.h"
#include "writer.h"

static const enum live_col always[] = {LC_KIND, LC_CLASS, LC_ID, LC_TTIME, LC_TOP};

/* The order in which columns leave, as docs/design/model.md documents it ("columns
 * leave in a fixed order, least important first: CAUSED-BY, ..., CSP."):
 * read from the document, not copied from the code, so that the two cannot
 * drift apart. Returns how many, each mapped by its title. */
static int documented_leave_order(enum live_col *out, int cap)
{
    static char doc[1 << 18];
    FILE *f = fopen("docs/design/model.md", "r");
    size_t len = f ? fread(doc, 1, sizeof(doc) - 1, f) : 0;
    if (f)
        fclose(f);
    doc[len] = '\0';
    const char *p = strstr(doc, "columns leave in a");
    p = p ? strstr(p, "least important first:") : NULL;
    const char *end = p ? strstr(p, ". KIND") : NULL;
    int n = 0;
    while (p && p < end && n < cap) {
        /* The next word of capitals, digits, '%' and '-': a column's title. */
        while (p < end && !(*p >= 'A' && *p <= 'Z'))
            p++;
        const char *w = p;
        while (p < end && ((*p >= 'A' && *p <= 'Z') || *p == '%' || *p == '-'))
            p++;
        if (p - w < 3)
            continue;
        for (int c = 0; c < LC_COUNT; c++)
            if (strlen(live_col_title(c)) == (size_t)(p - w) && !strncmp(live_col_title(c), w, (size_t)(p - w)))
                out[n++] = (enum live_col)c;
    }
    return n;
}

static void layouts(void)
{
    bool fits = true, kept = true, ordered = true, key_kept = true, total_ok = true;
    enum live_col leave[LC_COUNT];
    int n_leave = documented_leave_order(leave, LC_COUNT);
    CHECK(n_leave == 15, "docs/design/model.md names the 15 columns that leave, in order (read %d)", n_leave);
    /* Each width twice: rows of one cgroup, and of several (CGROUP shown). */
    for (int cg = 0; cg < 2; cg++)
    for (int w = 79; w <= 250; w++) {
        struct live_layout l;
        live_layout(&l, w, PT_RANK_TIME, cg);
        fits &= l.total <= w;
        int sum = -1;
        for (int c = 0; c < LC_COUNT; c++)
            sum += l.shown[c] ? l.width[c] + 1 : 0;
        total_ok &= sum == l.total;
        for (size_t i = 0; i < sizeof(always) / sizeof(always[0]); i++)
            kept &= l.shown[always[i]];
        /* A column is shown only if every column that leaves after it is. */
        for (int i = 0; i < n_leave; i++)
            for (int j = i + 1; j < n_leave; j++)
                ordered &= !l.shown[leave[i]] || l.shown[leave[j]] || (leave[j] == LC_CGROUP && !cg);
        for (enum pt_rank_key k = PT_RANK_CSP; k <= PT_RANK_PEAK; k++) {
            live_layout(&l, w, k, cg);
            enum live_col kc = k == PT_RANK_CSP ? LC_CSP : k == PT_RANK_PARKS ? LC_PARKS : LC_PEAK;
            key_kept &= l.shown[kc] && l.total <= w;
        }
    }
    CHECK(fits && total_ok, "a line fits its width, 79 to 250 characters");
    CHECK(kept, "KIND, CLASS, ID, THREAD-TIME and TOP-FRAME always stay");
    CHECK(ordered, "columns leave in the documented order");
    CHECK(key_kept, "the sort key's column stays from 79 characters");

    struct live_layout l;
    live_layout(&l, 79, PT_RANK_TIME, false);
    CHECK(!l.shown[LC_CAUSED] && !l.shown[LC_RLIFE] && l.width[LC_TOP] >= 16, "at 80 columns: no CAUSED-BY, a top frame");
    live_layout(&l, 100, PT_RANK_TIME, false);
    CHECK(l.width[LC_TOP] >= 28 && l.total <= 100,
          "at 100 columns the top frame keeps a Java Class.method whole (%d characters)", l.width[LC_TOP]);
    live_layout(&l, 199, PT_RANK_TIME, false);
    bool all = !l.shown[LC_CGROUP];
    for (int c = 0; c < LC_COUNT; c++)
        all &= l.shown[c] || c == LC_CGROUP;
    CHECK(all && l.total <= 199, "at 200 columns every column is shown, CGROUP only when asked");
    live_layout(&l, 212, PT_RANK_TIME, true);
    all = true;
    for (int c = 0; c < LC_COUNT; c++)
        all &= l.shown[c];
    CHECK(all && l.total <= 212, "rows of several cgroups: at 213 columns every column is shown, CGROUP too");
    bool between = false;   /* a width where COMM has left and CGROUP stays */
    for (int w = 79; w < 212; w++) {
        live_layout(&l, w, PT_RANK_TIME, true);
        between |= l.shown[LC_CGROUP] && !l.shown[LC_COMM];
    }
    CHECK(between, "rows of several cgroups: COMM leaves before CGROUP");
    live_layout(&l, 30, PT_RANK_PARKS, false);
    CHECK(l.shown[LC_KIND] && !l.shown[LC_PARKS], "too narrow even for the key's column: it leaves too");
}

/* WANT, WANT_CHARS characters long (UTF-8 aside, its length). */
/* Counts too wide for their column keep their magnitude: never cut. */
static void count_cell(enum live_col c, uint64_t v, const char *want)
{
    struct pt_row row = {0};
    char buf[64];
    if (c == LC_PARKS)
        row.fig.parks = v;
    else
        row.fig.peak_parked = v;
    live_cell(&row, c, buf, sizeof(buf));
    CHECK(!strcmp(buf, want), "%s %llu reads \"%s\" (got \"%s\")", live_col_title(c), (unsigned long long)v, want, buf);
}

static void counts(void)
{
    count_cell(LC_PARKS, 12345678, "12345678");
    count_cell(LC_PARKS, 123456789, "123M");
    count_cell(LC_PARKS, 1234567890, "1.23G");
    count_cell(LC_PEAK, 9999, "9999");
    count_cell(LC_PEAK, 12345, "12k");
    count_cell(LC_PEAK, 123456, "123k");
    count_cell(LC_PEAK, 1500000, "1.5M");
}

static void shortened(const char *in, int width, const char *want, int want_chars)
{
    char out[256];
    int n = live_shorten(in, width, out, sizeof(out));
    CHECK(!strcmp(out, want) && n == want_chars, "%s at %d: '%s' (want '%s')", in, width, out, want);
}

int main(void)
{
    layouts();
    const char *j = "org.apache.zookeeper.server.NIOServerCnxnFactory$SelectorThread.run";
    /* Whole when it fits; else the package's start, "~", Class.method. */
    counts();
    shortened(j, 80, j, (int)strlen(j));
    shortened(j, 47, "org.apa~NIOServerCnxnFactory$SelectorThread.run", 47);
    shortened(j, 40, "~NIOServerCnxnFactory$SelectorThread.run", 40);
    shortened("java.util.concurrent.locks.LockSupport.park", 20, "jav~LockSupport.park", 20);
    /* Class.method alone too long: its end, the method whole. */
    shortened("java.util.concurrent.locks.LockSupport.park", 10, "~port.park", 10);
    /* Not Java: the end goes. */
    shortened("Parker::park(bool, long)", 12, "Parker::par~", 12);
    shortened("worker", 6, "worker", 6);
    shortened("caf\xc3\xa9_lock_long", 6, "caf\xc3\xa9_~", 6);
    shortened("anything", 1, "~", 1);

    /* Go frames lose their import path's directories in the text outputs;
     * a slash inside a receiver, generic argument or module name stays. */
    CHECK(!strcmp(writer_short_frame("github.com/prometheus/prometheus/storage.(*mergeGenericQuerier).Select.func2"),
                  "storage.(*mergeGenericQuerier).Select.func2"), "a Go frame's package by its last element");
    CHECK(!strcmp(writer_short_frame("main.worker"), "main.worker") &&
          !strcmp(writer_short_frame("net/http.(*persistConn).writeLoop"), "http.(*persistConn).writeLoop"),
          "main and the standard library");
    CHECK(!strcmp(writer_short_frame("sync.Map[go.shape.string,github.com/x/y.T].Load"),
                  "sync.Map[go.shape.string,github.com/x/y.T].Load"), "a slash in a generic argument stays");
    CHECK(!strcmp(writer_short_frame("[prometheus+0x472443]"), "[prometheus+0x472443]") &&
          !strcmp(writer_short_frame("LazyCompile:*run /srv/app.js:12"), "LazyCompile:*run /srv/app.js:12") &&
          !strcmp(writer_short_frame("java.util.concurrent.locks.LockSupport.park"),
                  "java.util.concurrent.locks.LockSupport.park") && !writer_short_frame(NULL),
          "other frames whole");
    return CHECK_DONE();
}
