#include "live_columns.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cgroup_label.h"
#include "duration.h"
#include "sanitize.h"
#include "writer.h"

/* MIN is what a column needs; a flexible one (names) grows to PREF when
 * there is room, and TOP-FRAME and CAUSED-BY beyond it. */
static const struct {
    const char *title;
    int min, pref;
    bool right;
} cols[LC_COUNT] = {
    [LC_KIND] = {"KIND", 11, 11, false},     [LC_PID] = {"PID", 7, 7, true},
    [LC_COMM] = {"COMM", 8, 15, false},      [LC_CGROUP] = {"CGROUP", 12, 24, false},
    [LC_CLASS] = {"CLASS", 13, 28, false},
    [LC_ID] = {"ID", 14, 18, false},         [LC_ROLE] = {"ROLE", 4, 4, false},
    [LC_PARKS] = {"PARKS", 8, 8, true},      [LC_PEAK] = {"PEAK", 4, 4, true},
    [LC_TTIME] = {"THREAD-TIME", 11, 11, true}, [LC_RTIME] = {"REAL-TIME", 10, 10, true},
    [LC_AVGPARK] = {"AVG-PARK", 9, 9, true}, [LC_AVGHOLD] = {"AVG-HOLD", 9, 9, true},
    [LC_REAL] = {"REAL%", 5, 5, true},       [LC_THREAD] = {"THREAD%", 7, 7, true},
    [LC_RLIFE] = {"RLIFE%", 6, 6, true},     [LC_TLIFE] = {"TLIFE%", 6, 6, true},
    [LC_CSP] = {"CSP", 5, 5, true},          [LC_TOP] = {"TOP-FRAME", 16, 40, false},
    [LC_CAUSED] = {"CAUSED-BY", 20, 40, false},
};

/* Least important first: who caused the waits, the whole-life
 * utilisations (the window's say more in a live view), then the figures
 * the others imply or that matter less for spotting the worst blocker. */
static const enum live_col drop_order[] = {LC_CAUSED, LC_RLIFE, LC_TLIFE, LC_REAL,   LC_RTIME,
                                           LC_AVGHOLD, LC_COMM, LC_CGROUP, LC_ROLE,  LC_THREAD, LC_AVGPARK,
                                           LC_PID,    LC_PEAK,  LC_PARKS, LC_CSP};

/* Room goes to the names, most telling first. */
static const enum live_col grow_order[] = {LC_TOP, LC_CLASS, LC_ID, LC_CGROUP, LC_COMM, LC_CAUSED};

static enum live_col key_col(enum pt_rank_key key)
{
    switch (key) {
    case PT_RANK_CSP:
        return LC_CSP;
    case PT_RANK_PARKS:
        return LC_PARKS;
    case PT_RANK_PEAK:
        return LC_PEAK;
    default:
        return LC_TTIME;
    }
}

/* What TOP-FRAME asks for before the figures give way: a Java frame's
 * Class.method whole ("Transaction.waitForThisToEnd"), where 100 columns
 * cut it to "~.waitForThisToEnd" (issue 37). */
#define TOP_FRAME_WANT 28

void live_layout(struct live_layout *l, int width, enum pt_rank_key key, bool cgroups)
{
    int total = -1;   /* no separator before the first column */
    for (int c = 0; c < LC_COUNT; c++) {
        l->shown[c] = c != LC_CGROUP || cgroups;
        l->width[c] = cols[c].min;
        total += l->shown[c] ? cols[c].min + 1 : 0;
    }
    /* Once columns must leave, they leave for the top frame's Class.method
     * too. */
    int want = total > width ? TOP_FRAME_WANT - cols[LC_TOP].min : 0;
    for (size_t i = 0; i < sizeof(drop_order) / sizeof(drop_order[0]) && total + want > width; i++) {
        enum live_col c = drop_order[i];
        if (c == key_col(key) || !l->shown[c])
            continue;
        l->shown[c] = false;
        total -= cols[c].min + 1;
    }
    /* Too narrow for the sort key's column too: the order says it. */
    enum live_col k = key_col(key);
    if (total > width && k != LC_TTIME && l->shown[k]) {
        l->shown[k] = false;
        total -= cols[k].min + 1;
    }
    int extra = width - total;
    for (size_t i = 0; i < sizeof(grow_order) / sizeof(grow_order[0]) && extra > 0; i++) {
        enum live_col c = grow_order[i];
        if (!l->shown[c])
            continue;
        int more = cols[c].pref - l->width[c];
        if (more <= 0)
            continue;
        more = more < extra ? more : extra;
        l->width[c] += more;
        extra -= more;
    }
    /* What is left widens the frames: a wide terminal shows them whole. */
    if (extra > 0 && l->shown[LC_CAUSED]) {
        l->width[LC_CAUSED] += extra / 2;
        extra -= extra / 2;
    }
    if (extra > 0)
        l->width[LC_TOP] += extra;
    l->total = -1;
    for (int c = 0; c < LC_COUNT; c++)
        if (l->shown[c])
            l->total += l->width[c] + 1;
}

const char *live_col_title(enum live_col c)
{
    return cols[c].title;
}

bool live_col_right(enum live_col c)
{
    return cols[c].right;
}

/* A count in at most WIDTH characters: whole when it fits, else in
 * thousands, millions, ... to three figures ("123M", "1.23G"). Cut like a
 * name, 123456789 read "1234567~", a hundredth of what it was. */
static void put_count(char *buf, size_t len, uint64_t v, int width)
{
    static const char suffix[] = "kMGTPE";
    int n = snprintf(buf, len, "%" PRIu64, v);
    if (n <= width)
        return;
    double x = (double)v;
    int i = -1;
    while (x >= 999.5 && i < 5) {
        x /= 1000;
        i++;
    }
    for (int d = x < 9.995 ? 2 : x < 99.95 ? 1 : 0; d >= 0; d--)
        if (snprintf(buf, len, "%.*f%c", d, x, suffix[i]) <= width)
            return;
}

static void put_dur(char *buf, size_t len, uint64_t ns)
{
    if (ns)
        duration_format(ns, buf, len);
    else
        snprintf(buf, len, "-");
}

/* The cells that say which process: its pid (none for a cgroup's row),
 * name and cgroup. */
static void process_cell(const struct pt_row *row, enum live_col c, char *buf, size_t len)
{
    char label[4 * 64 + 1];
    if (c == LC_PID && row->pid < 0)
        snprintf(buf, len, "-");
    else if (c == LC_PID)
        snprintf(buf, len, "%d", row->pid);
    else if (c == LC_COMM)
        sanitize_copy(buf, len, row->comm, len);
    else {
        cgroup_label(row, cols[c].pref, label, sizeof(label));
        sanitize_copy(buf, len, label, len);
    }
}

void live_cell(const struct pt_row *row, enum live_col c, char *buf, size_t len)
{
    const struct pt_figures *g = &row->fig;
    switch (c) {
    case LC_KIND:
        sanitize_copy(buf, len, row->kind, len);
        break;
    case LC_PID:
    case LC_COMM:
    case LC_CGROUP:
        process_cell(row, c, buf, len);
        break;
    case LC_CLASS:
        sanitize_copy(buf, len, writer_simple_class(row->cls), len);
        break;
    case LC_ID:
        if (row->objects > 1)
            snprintf(buf, len, "%" PRIu32 " objects", row->objects);
        else if (row->name)
            sanitize_copy(buf, len, writer_short_frame(row->name), len);
        else
            snprintf(buf, len, "0x%" PRIx64, row->id);
        break;
    case LC_ROLE:
        snprintf(buf, len, "%s", row->wait ? "wait" : "lock");
        break;
    case LC_PARKS:
        put_count(buf, len, g->parks, cols[c].min);
        break;
    case LC_PEAK:
        put_count(buf, len, g->peak_parked, cols[c].min);
        break;
    case LC_TTIME:
        put_dur(buf, len, g->thread_time_ns);
        break;
    case LC_RTIME:
        put_dur(buf, len, g->real_time_ns);
        break;
    case LC_AVGPARK:
        put_dur(buf, len, g->avg_park_ns);
        break;
    case LC_AVGHOLD:
        put_dur(buf, len, g->avg_hold_ns);
        break;
    case LC_REAL:
        snprintf(buf, len, "%.1f", g->real_util * 100);
        break;
    case LC_THREAD:
        snprintf(buf, len, "%.1f", g->thread_util * 100);
        break;
    case LC_RLIFE:
        snprintf(buf, len, "%.1f", g->real_life_util * 100);
        break;
    case LC_TLIFE:
        snprintf(buf, len, "%.1f", g->thread_life_util * 100);
        break;
    case LC_CSP:
        /* A star marks a lock in a phase, as in the text report. */
        if (row->has_csp)
            snprintf(buf, len, "%s%.2f", row->in_phase ? "*" : "", row->csp);
        else
            snprintf(buf, len, "-");
        break;
    case LC_TOP:
        sanitize_copy(buf, len, row->top_frame ? writer_short_frame(row->top_frame) : "-", len);
        break;
    case LC_CAUSED:
        sanitize_copy(buf, len, row->waker_stack && row->waker_top_frame ? writer_short_frame(row->waker_top_frame) : "-",
                      len);
        break;
    default:
        buf[0] = '\0';
    }
}

/* Characters, not bytes: S is valid UTF-8 (sanitized). */
static int chars(const char *s, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n && s[i]; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

/* The byte offset of character K of S (its end when shorter). */
static size_t offset_of(const char *s, int k)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && k-- == 0)
            break;
    return i;
}

/* A Java name: dotted, no spaces, no C++ scope or argument list. */
static bool is_java(const char *s)
{
    return strchr(s, '.') && !strchr(s, ' ') && !strchr(s, '(') && !strstr(s, "::");
}

int live_shorten(const char *s, int width, char *out, size_t len)
{
    size_t n = strlen(s);
    int have = chars(s, n);
    if (width <= 0 || !len) {
        if (len)
            out[0] = '\0';
        return 0;
    }
    if (have <= width) {
        snprintf(out, len, "%s", s);
        return have;
    }
    if (width == 1) {
        snprintf(out, len, "~");
        return 1;
    }
    const char *tail = NULL;
    if (is_java(s)) {
        /* Class.method: from the dot before the last one. */
        const char *last = strrchr(s, '.');
        tail = last;
        while (tail > s && tail[-1] != '.')
            tail--;
    }
    if (!tail) {   /* the start is the most telling part: the end goes */
        size_t head = offset_of(s, width - 1);
        snprintf(out, len, "%.*s~", (int)head, s);
        return width;
    }
    int tail_chars = chars(tail, strlen(tail));
    if (tail_chars + 1 > width) {   /* even Class.method is too long: keep its end */
        snprintf(out, len, "~%s", tail + offset_of(tail, tail_chars - (width - 1)));
        return width;
    }
    size_t head = offset_of(s, width - 1 - tail_chars);
    snprintf(out, len, "%.*s~%s", (int)head, s, tail);
    return width;
}
