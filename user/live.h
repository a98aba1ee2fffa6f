/* The live view between main.c's loop and its writer (write_live.c): the
 * terminal taken and given back (terminal.h), the keys, the resizes, and
 * the options the keys change while it runs (the sort, idle rows, and the
 * rows per report, fitted to the height unless --top was given). */
#ifndef PT_LIVE_H
#define PT_LIVE_H
#include <stdbool.h>
#include <stdio.h>

#include "live_view.h"
#include "model.h"
#include "options.h"

struct live {
    bool on;               /* the terminal is taken */
    int key_fd;            /* standard input when keys are read, else -1 */
    struct live_view view;
    struct pt_options *o;
    struct pt_options given;   /* the command line's choices, for the final report */
    FILE *out;
};

/* Takes the terminal OUT (standard output) is on; keys come from standard
 * input when it is that terminal's foreground. */
void live_start(struct live *l, struct pt_options *o, FILE *out);

/* Draws M (an interval report), or with M NULL what is on the screen
 * again; 0, or -1 when the output failed. Nothing once stopped. */
int live_draw(struct live *l, const struct pt_model *m);

/* The terminal changed size (SIGWINCH): redrawn to fit. A redraw that
 * fails shows at the next report's (emit in main.c). */
void live_resized(struct live *l);

/* Reads the keys waiting on key_fd and redraws; false when one was q. */
bool live_keys(struct live *l);

/* Ctrl-Z (SIGTSTP, read from the signalfd): the terminal is given back,
 * parktrace stops, and takes the terminal again once continued. */
void live_suspend(struct live *l);

/* Gives the terminal back, and the options their command-line values. */
void live_stop(struct live *l);

#endif
