/* The terminal the live view draws on: its size, and a screen of its own
 * (the alternate screen, cursor hidden, keys read one by one) that is
 * given back on every way out: terminal_leave on the normal paths, an
 * atexit handler for exit() on an error, and a handler for the signals
 * that kill (SIGSEGV, SIGABRT, ...). SIGINT, SIGTERM, SIGWINCH and SIGTSTP
 * are the caller's (main.c reads them from a signalfd). */
#ifndef PT_TERMINAL_H
#define PT_TERMINAL_H
#include <stdbool.h>

/* FD's size in character cells; false when FD is not a terminal or says 0. */
bool terminal_size(int fd, int *cols, int *rows);

/* Whether keys can be read from FD: a terminal whose foreground we are (a
 * background job changing its modes would be stopped by SIGTTOU). */
bool terminal_can_read_keys(int fd);

/* Takes the terminal: OUT_FD switches to the alternate screen with the
 * cursor hidden; IN_FD (or -1) stops echoing and hands keys over at once.
 * Ctrl-C still raises SIGINT. Returns 0, or -1 when IN_FD's modes could
 * not be changed (the screen is taken all the same). */
int terminal_enter(int out_fd, int in_fd);

/* Gives the terminal back as it was; does nothing when it was not taken.
 * The caller flushes what it buffered for OUT_FD first. */
void terminal_leave(void);

#endif
