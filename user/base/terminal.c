#include "terminal.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/* The alternate screen (smcup/rmcup) and the cursor (civis/cnorm): plain
 * ANSI sequences every terminal emulator in use knows. */
#define ENTER_SEQ "\033[?1049h\033[?25l"
#define LEAVE_SEQ "\033[?25h\033[?1049l"

/* Static, so that a signal handler can give the terminal back. */
static volatile sig_atomic_t taken;
static int out = -1, in = -1;
static struct termios saved;
static bool modes_changed;

bool terminal_size(int fd, int *cols, int *rows)
{
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) || !ws.ws_col || !ws.ws_row)
        return false;
    *cols = ws.ws_col;
    *rows = ws.ws_row;
    return true;
}

bool terminal_can_read_keys(int fd)
{
    return isatty(fd) && tcgetpgrp(fd) == getpgrp();
}

/* Only async-signal-safe calls: it also runs in a signal handler. */
static void give_back(void)
{
    if (!taken)
        return;
    taken = 0;
    if (modes_changed)
        tcsetattr(in, TCSADRAIN, &saved);
    ssize_t n = write(out, LEAVE_SEQ, sizeof(LEAVE_SEQ) - 1);
    (void)n;
}

static void on_fatal(int sig)
{
    give_back();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The exit and fatal-signal hooks are set once for the process. */
static bool hooked;

int terminal_enter(int out_fd, int in_fd)
{
    if (!hooked) {
        atexit(terminal_leave);
        static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGQUIT};
        for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
            signal(fatal[i], on_fatal);
        hooked = true;
    }
    out = out_fd;
    in = in_fd;
    modes_changed = false;
    int rc = 0;
    if (in_fd >= 0) {
        struct termios t;
        if (tcgetattr(in_fd, &saved) == 0) {
            t = saved;
            /* Keys one by one, unechoed; ISIG stays, so Ctrl-C is still
             * SIGINT, and output processing too ("\n" moves to column 0). */
            t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
            t.c_cc[VMIN] = 1;
            t.c_cc[VTIME] = 0;
            modes_changed = tcsetattr(in_fd, TCSADRAIN, &t) == 0;
        }
        rc = modes_changed ? 0 : -1;
    }
    taken = 1;
    ssize_t n = write(out_fd, ENTER_SEQ, sizeof(ENTER_SEQ) - 1);
    (void)n;
    return rc;
}

void terminal_leave(void)
{
    give_back();
}
