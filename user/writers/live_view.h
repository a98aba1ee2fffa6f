/* The live view's state (write_live.c): what the keys chose, the
 * terminal's size, and a copy of the last report, so that a key or a
 * resize redraws at once, between reports (the model's names are only
 * valid until the collector's next call). */
#ifndef PT_LIVE_VIEW_H
#define PT_LIVE_VIEW_H
#include <stdbool.h>
#include <stdint.h>
#include "rank.h"

struct live_row;   /* a row and copies of its names */
#define LIVE_CHAIN_LINE 512

struct live_view {
    /* Chosen by the keys (live.c). */
    enum pt_rank_key sort;
    bool show_idle;     /* idle housekeeping rows shown, ranked in place */
    bool paused;        /* reports are not taken: the screen stays */
    bool help;          /* the keys are shown instead of the rows */
    bool chains;        /* the wait chains are shown instead of the rows */
    bool keys;          /* keys are read: the header says how to get help */
    int cols, rows;     /* the terminal's size */
    /* The last report taken. */
    struct live_row *v;
    int n, cap;
    bool taken;
    bool cgroups;       /* its rows are in more than one cgroup: a CGROUP column */
    char (*chain_lines)[LIVE_CHAIN_LINE];   /* its chains, as the text report's lines */
    int nchains, chains_cap;
    uint64_t window_ns, waits, blockers, drops, self_cpu_ns;
};

void live_view_free(struct live_view *v);

#endif
