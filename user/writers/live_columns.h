/* The live view's columns (write_live.c): which fit a terminal WIDTH
 * characters wide, how wide each is, and each row's cells. When space runs
 * short, columns leave in a fixed order, least important first (live_
 * columns.c, drop_order); KIND, CLASS, ID, THREAD-TIME and TOP-FRAME, and
 * the column the rows are sorted by, always stay. */
#ifndef PT_LIVE_COLUMNS_H
#define PT_LIVE_COLUMNS_H
#include <stdbool.h>
#include <stddef.h>
#include "model.h"
#include "rank.h"

/* In the order they are shown. */
enum live_col {
    LC_KIND, LC_PID, LC_COMM, LC_CGROUP, LC_CLASS, LC_ID, LC_ROLE, LC_PARKS, LC_PEAK, LC_TTIME, LC_RTIME, LC_AVGPARK,
    LC_AVGHOLD, LC_REAL, LC_THREAD, LC_RLIFE, LC_TLIFE, LC_CSP, LC_TOP, LC_CAUSED, LC_COUNT
};

struct live_layout {
    bool shown[LC_COUNT];
    int width[LC_COUNT];
    int total;            /* characters a line takes, separators included */
};

/* Lays the columns out for a line of at most WIDTH characters, the rows
 * sorted by KEY. A terminal too narrow for the columns that always stay
 * gets them at their narrowest, and the caller cuts the line. CGROUPS:
 * the rows are in more than one cgroup, and CGROUP is a column. */
void live_layout(struct live_layout *l, int width, enum pt_rank_key key, bool cgroups);

/* The column's title. */
const char *live_col_title(enum live_col c);

/* Whether the column is right-aligned (a figure). */
bool live_col_right(enum live_col c);

/* ROW's cell in column C, not yet cut to width, safe to show. */
void live_cell(const struct pt_row *row, enum live_col c, char *buf, size_t len);

/* Copies S (safe to show) into OUT cut to WIDTH characters: a Java name
 * (package.Class.method) loses the middle of its package first, keeping
 * the class's simple name and the method; anything else loses its end. A
 * cut shows as "~". Returns the characters written. */
int live_shorten(const char *s, int width, char *out, size_t len);

#endif
