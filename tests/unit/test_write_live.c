/* The live view's frame (write_live.c) from a small model: idle rows hidden
 * until shown, rows ranked by the view's key, as many rows as the height
 * leaves and no line wider than the terminal, a paused view keeping what it
 * shows, and the drops in reverse video only when there are some. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "live_view.h"
#include "writer.h"

static struct pt_row rows[4];
static struct pt_model model;

static void row(int i, const char *name, uint64_t ns, uint64_t parks, bool idle)
{
    rows[i] = (struct pt_row){.kind = "futex", .pid = 100 + i, .comm = "app", .name = name, .cls = "pthread_mutex",
                              .top_frame = "worker", .objects = 1, .idle = idle};
    rows[i].fig.thread_time_ns = ns;
    rows[i].fig.parks = parks;
}

/* The frame V draws of M (NULL: again), in a string the caller frees. */
static char *draw(struct live_view *v, const struct pt_model *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f && write_live(f, m, v) == 0, "write_live wrote a frame");
    fclose(f);
    return buf;
}

static int line_of(const char *frame, const char *what)
{
    const char *at = strstr(frame, what);
    int n = 0;
    for (const char *p = frame; at && p < at; p++)
        n += *p == '\n';
    return at ? n : -1;
}

static bool fits(const char *frame, int cols, int lines)
{
    int n = 1, w = 0, widest = 0;
    for (const char *p = strstr(frame, "\033[J") + 3; *p; p++) {
        if (*p == '\033') {   /* the header's reverse video takes no room */
            p = strchr(p, 'm');
            continue;
        }
        if (*p == '\n') {
            n++;
            w = 0;
        } else if (++w > widest) {
            widest = w;
        }
    }
    return widest < cols && n <= lines;
}

int main(void)
{
    row(0, "busy_lock", 3000000, 10, false);
    row(1, "idle_pool", 9000000, 5, true);
    row(2, "hot_lock", 1000000, 900, false);
    row(3, "other_lock", 500000, 1, false);
    model = (struct pt_model){.type = PT_REPORT_INTERVAL, .window_ns = 1000000000, .rows = rows, .nrows = 4,
                              .idle_last = true};
    model.totals.waits = 916;

    struct live_view v = {.cols = 80, .rows = 24, .sort = PT_RANK_TIME};
    char *f = draw(&v, &model);
    CHECK(line_of(f, "idle_pool") < 0 && strstr(f, "1 idle hidden"), "idle rows hidden, and counted in the header");
    CHECK(line_of(f, "busy_lock") < line_of(f, "hot_lock"), "by thread time: busy_lock first");
    CHECK(!strstr(f, "\033[7m"), "no reverse video without drops");
    CHECK(fits(f, 80, 24), "the frame fits 80x24");
    free(f);

    v.show_idle = true;
    f = draw(&v, NULL);
    CHECK(line_of(f, "idle_pool") > 0 && line_of(f, "idle_pool") < line_of(f, "busy_lock"),
          "shown, the idle row ranks in place (most thread time)");
    free(f);

    v.sort = PT_RANK_PARKS;
    f = draw(&v, NULL);
    CHECK(line_of(f, "hot_lock") < line_of(f, "busy_lock") && strstr(f, "sort parks"), "by parks: hot_lock first");
    free(f);

    v.rows = 4;   /* the header, the titles and two rows */
    f = draw(&v, NULL);
    CHECK(fits(f, 80, 4) && line_of(f, "hot_lock") == 2 && line_of(f, "busy_lock") == 3 && line_of(f, "idle_pool") < 0,
          "a 4-line terminal: two rows, the last without a newline");
    CHECK(f[strlen(f) - 1] != '\n', "the last line ends without a newline: the screen never scrolls");
    free(f);

    v.paused = true;
    model.nrows = 1;
    model.totals.dropped_events = 3;
    f = draw(&v, &model);
    CHECK(line_of(f, "hot_lock") == 2 && strstr(f, "PAUSED"), "paused, the last rows stay");
    free(f);
    v.paused = false;
    v.rows = 24;
    f = draw(&v, &model);
    CHECK(line_of(f, "hot_lock") < 0 && strstr(f, "\033[7mdrops 3\033[0m"), "resumed, a new report; drops in reverse video");
    free(f);
    live_view_free(&v);
    return CHECK_DONE();
}
