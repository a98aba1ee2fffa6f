/* The live view (-i on a terminal), as top shows processes: a header line
 * (waits per second, blockers, drops, parktrace's own CPU, the sort key),
 * the column titles, then as many rows as the terminal has lines, each cut
 * to its width (live_columns.c chooses the columns). One frame is one
 * write: home, clear, lines; the last line ends without a newline so that
 * the screen never scrolls. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_label.h"
#include "live_columns.h"
#include "live_view.h"
#include "sanitize.h"
#include "writer.h"

#define NAME_MAX_BYTES 256

/* A row whose names point into the row itself: rows are sorted through
 * pointers and never moved once copied. */
struct live_row {
    struct pt_row row;
    char kind[16], comm[PT_MODEL_COMM], cls[NAME_MAX_BYTES], name[NAME_MAX_BYTES];
    char top[NAME_MAX_BYTES], waker[NAME_MAX_BYTES];
};

static const char *keep(char *dst, const char *src)
{
    if (!src)
        return NULL;
    snprintf(dst, NAME_MAX_BYTES, "%s", src);
    return dst;
}

/* M's chains into V, each as the text report's line (no chain where out
 * of memory). */
static void take_chains(struct live_view *v, const struct pt_model *m)
{
    v->nchains = 0;
    if (m->nchains > v->chains_cap) {
        char (*nl)[LIVE_CHAIN_LINE] = realloc(v->chain_lines, (size_t)m->nchains * sizeof(*nl));
        if (!nl)
            return;
        v->chain_lines = nl;
        v->chains_cap = m->nchains;
    }
    for (int i = 0; i < m->nchains; i++) {
        FILE *f = fmemopen(v->chain_lines[i], LIVE_CHAIN_LINE, "w");
        if (!f)
            return;
        setvbuf(f, NULL, _IONBF, 0);
        write_chain_line(f, &m->chains[i]);
        fclose(f);
        v->chain_lines[i][LIVE_CHAIN_LINE - 1] = '\0';
        v->chain_lines[i][strcspn(v->chain_lines[i], "\n")] = '\0';
        v->nchains++;
    }
}

/* Copies M's rows and totals into V; false when out of memory (the last
 * copy stays). */
static bool take(struct live_view *v, const struct pt_model *m)
{
    if (m->nrows > v->cap) {
        struct live_row *nv = realloc(v->v, (size_t)m->nrows * sizeof(*nv));
        if (!nv)
            return false;
        v->v = nv;
        v->cap = m->nrows;
    }
    for (int i = 0; i < m->nrows; i++) {
        struct live_row *r = &v->v[i];
        r->row = m->rows[i];
        r->row.kind = keep(r->kind, m->rows[i].kind);
        r->row.comm = keep(r->comm, m->rows[i].comm);
        r->row.cls = keep(r->cls, m->rows[i].cls);
        r->row.name = keep(r->name, m->rows[i].name);
        r->row.top_frame = keep(r->top, m->rows[i].top_frame);
        r->row.waker_top_frame = keep(r->waker, m->rows[i].waker_top_frame);
        /* The stacks are not kept: only whether a waker was seen. */
        r->row.first_stack = NULL;
        r->row.waker_stack = m->rows[i].waker_stack && r->row.waker_top_frame ? m->rows[i].waker_stack : NULL;
    }
    v->n = m->nrows;
    take_chains(v, m);
    v->cgroups = cgroup_label_wanted(m);
    v->window_ns = m->window_ns;
    v->waits = m->totals.waits;
    v->blockers = m->totals.blockers;
    v->drops = m->totals.dropped_events + m->totals.dropped_stacks;
    v->self_cpu_ns = m->self_cpu_ns;
    v->taken = true;
    return true;
}

/* A line of at most WIDTH characters (escapes aside) being built. */
struct line {
    char b[8192];
    size_t len;
    int chars, width;
};

static void add(struct line *l, const char *s, int n_chars)
{
    size_t n = strlen(s);
    if (l->chars + n_chars > l->width || l->len + n >= sizeof(l->b))
        return;
    memcpy(l->b + l->len, s, n);
    l->len += n;
    l->b[l->len] = '\0';
    l->chars += n_chars;
}

/* Pads to N characters, or as far as the line goes. */
static void pad(struct line *l, int n)
{
    while (n-- > 0 && l->chars < l->width)
        add(l, " ", 1);
}

static void cell(struct line *l, const char *text, int width, bool right)
{
    char cut[4 * NAME_MAX_BYTES];
    int n = live_shorten(text, width, cut, sizeof(cut));
    if (right)
        pad(l, width - n);
    /* A cell that would run past the line's end is cut there. */
    int room = l->width - l->chars;
    if (n > room)
        n = live_shorten(text, room, cut, sizeof(cut));
    add(l, cut, n);
    if (!right)
        pad(l, width - n);
}

static void put_line(FILE *f, struct line *l, bool last)
{
    /* Trailing blanks would only fill the terminal's line. */
    while (l->len && l->b[l->len - 1] == ' ')
        l->b[--l->len] = '\0';
    fputs(l->b, f);
    if (!last)
        fputc('\n', f);
}

static void titles(FILE *f, const struct live_layout *lay, int width)
{
    struct line l = {.width = width};
    for (int c = 0, first = 1; c < LC_COUNT; c++) {
        if (!lay->shown[c])
            continue;
        if (!first)
            pad(&l, 1);
        first = 0;
        cell(&l, live_col_title(c), lay->width[c], live_col_right(c));
    }
    put_line(f, &l, false);
}

static void row_line(FILE *f, const struct pt_row *row, const struct live_layout *lay, int width, bool last)
{
    struct line l = {.width = width};
    char buf[4 * NAME_MAX_BYTES];
    for (int c = 0, first = 1; c < LC_COUNT; c++) {
        if (!lay->shown[c])
            continue;
        if (!first)
            pad(&l, 1);
        first = 0;
        live_cell(row, c, buf, sizeof(buf));
        cell(&l, buf, lay->width[c], live_col_right(c));
    }
    put_line(f, &l, last);
}

/* Adds S, cut to what is left of the line. */
static void text(struct line *l, const char *s)
{
    char cut[512];
    int n = live_shorten(s, l->width - l->chars, cut, sizeof(cut));
    add(l, cut, n);
}

/* The header: the figures, then the view's state. On a narrow terminal the
 * key hint and then the program's name leave first, and what still does
 * not fit is cut at the end. The drops are shown in reverse video when
 * there are any: escapes take no room, so they are added as it is written. */
static void header(FILE *f, const struct live_view *v, int hidden, int width)
{
    enum { NAME, WAITS, BLOCKERS, DROPS, CPU, SORT, PAUSED, IDLE, HELP, NSEG };
    char seg[NSEG][48] = {{0}};
    double secs = v->window_ns ? (double)v->window_ns / 1e9 : 1;
    snprintf(seg[NAME], sizeof(seg[NAME]), "parktrace");
    snprintf(seg[WAITS], sizeof(seg[WAITS]), "%.0f waits/s", (double)v->waits / secs);
    snprintf(seg[BLOCKERS], sizeof(seg[BLOCKERS]), "%" PRIu64 " blockers live", v->blockers);
    snprintf(seg[DROPS], sizeof(seg[DROPS]), "drops %" PRIu64, v->drops);
    snprintf(seg[CPU], sizeof(seg[CPU]), "cpu %.1f%%", 100.0 * (double)v->self_cpu_ns / 1e9 / secs);
    snprintf(seg[SORT], sizeof(seg[SORT]), "sort %s", rank_key_name(v->sort));
    if (v->paused)
        snprintf(seg[PAUSED], sizeof(seg[PAUSED]), "PAUSED");
    if (hidden)
        snprintf(seg[IDLE], sizeof(seg[IDLE]), "%d idle hidden", hidden);
    if (v->keys)
        snprintf(seg[HELP], sizeof(seg[HELP]), "h help");
    int len = -2;
    for (int i = 0; i < NSEG; i++)
        len += seg[i][0] ? (int)strlen(seg[i]) + 2 : 0;
    static const int optional[] = {HELP, NAME};
    for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]) && len > width; i++) {
        len -= seg[optional[i]][0] ? (int)strlen(seg[optional[i]]) + 2 : 0;
        seg[optional[i]][0] = '\0';
    }
    struct line l = {.width = width};
    for (int i = 0; i < NSEG; i++) {
        if (!seg[i][0])
            continue;
        if (l.chars)
            add(&l, "  ", 2);
        size_t from = l.len;
        text(&l, seg[i]);
        if (i == DROPS && v->drops && l.len > from) {
            /* Written up to here, then the segment in reverse video. */
            fprintf(f, "%.*s\033[7m%s\033[0m", (int)from, l.b, l.b + from);
            l.b[0] = '\0';
            l.len = 0;   /* l.chars still counts what was written */
        }
    }
    put_line(f, &l, false);
}

static const char *const help_lines[] = {
    "Keys:",
    "  q        quit: the terminal is given back and the final report printed",
    "  s        sort by thread time, CSP, parks, peak parked (in turn)",
    "  i        show or hide idle housekeeping rows (--show-idle)",
    "  c        show the wait chains instead of the rows, or the rows again",
    "  space    pause or resume the display; tracing goes on",
    "  h or ?   show or hide these keys",
};

int write_live(FILE *f, const struct pt_model *m, struct live_view *v)
{
    if (m && !v->paused)
        take(v, m);
    int width = v->cols > 1 ? v->cols - 1 : 1;   /* the last column left free: no terminal wraps */
    int height = v->rows > 2 ? v->rows : 2;
    const struct pt_row **order = malloc((size_t)(v->n ? v->n : 1) * sizeof(*order));
    if (!order)
        return -1;
    int shown = 0, hidden = 0;
    for (int i = 0; i < v->n; i++) {
        if (!v->show_idle && v->v[i].row.idle)
            hidden++;
        else
            order[shown++] = &v->v[i].row;
    }
    rank_order(order, shown, v->sort, !v->show_idle);

    fputs("\033[H\033[J", f);
    header(f, v, hidden, width);
    int left = height - 1;
    if (v->help) {
        for (size_t i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]) && left > 0; i++, left--) {
            struct line l = {.width = width};
            cell(&l, help_lines[i], width, false);
            put_line(f, &l, left == 1);
        }
    } else if (v->chains) {
        struct line l = {.width = width};
        cell(&l, v->nchains ? "  wait chains: who waited -[on what]-> its holder ... (how the last stood)"
                            : "  (no wait chains)", width, false);
        put_line(f, &l, --left <= 0 || !v->nchains);
        for (int i = 0; i < v->nchains && left > 0; i++, left--) {
            struct line c = {.width = width};
            text(&c, v->chain_lines[i]);
            put_line(f, &c, left == 1 || i == v->nchains - 1);
        }
    } else if (!v->taken || !shown) {
        struct line l = {.width = width};
        cell(&l, v->taken ? "  (no waits)" : "  (waiting for the first report)", width, false);
        put_line(f, &l, true);
    } else {
        struct live_layout lay;
        live_layout(&lay, width, v->sort, v->cgroups);
        titles(f, &lay, width);
        left--;
        for (int i = 0; i < shown && left > 0; i++, left--)
            row_line(f, order[i], &lay, width, left == 1 || i == shown - 1);
    }
    free(order);
    return writer_flush(f);
}

void live_view_free(struct live_view *v)
{
    free(v->v);
    v->v = NULL;
    v->n = v->cap = 0;
    free(v->chain_lines);
    v->chain_lines = NULL;
    v->nchains = v->chains_cap = 0;
}
