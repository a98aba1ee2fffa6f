#include "live.h"

#include <signal.h>
#include <unistd.h>

#include "terminal.h"
#include "writer.h"

/* Two lines go to the header and the titles. */
static void fit(struct live *l)
{
    if (!terminal_size(fileno(l->out), &l->view.cols, &l->view.rows)) {
        l->view.cols = 80;
        l->view.rows = 24;
    }
    if (!l->given.top_given)
        l->o->top = l->view.rows > 3 ? l->view.rows - 2 : 1;
}

void live_start(struct live *l, struct pt_options *o, FILE *out)
{
    l->o = o;
    l->given = *o;
    l->out = out;
    l->key_fd = terminal_can_read_keys(STDIN_FILENO) ? STDIN_FILENO : -1;
    if (terminal_enter(fileno(out), l->key_fd))
        l->key_fd = -1;
    l->on = true;
    l->view.sort = (enum pt_rank_key)o->sort;   /* options.h keeps rank.h's order */
    l->view.show_idle = o->show_idle;
    l->view.keys = l->key_fd >= 0;
    fit(l);
    live_draw(l, NULL);
}

int live_draw(struct live *l, const struct pt_model *m)
{
    return l->on ? write_live(l->out, m, &l->view) : 0;
}

void live_resized(struct live *l)
{
    if (!l->on)
        return;
    fit(l);
    live_draw(l, NULL);
}

bool live_keys(struct live *l)
{
    char keys[64];
    ssize_t n = read(l->key_fd, keys, sizeof(keys));
    if (n <= 0) {   /* the terminal has gone: no more keys */
        l->key_fd = -1;
        return true;
    }
    struct live_view *v = &l->view;
    for (ssize_t i = 0; i < n; i++) {
        switch (keys[i]) {
        case 'q':
            return false;
        case 's':
            /* The collector ranks the next reports by it too, so that the
             * rows it keeps are the best by this key. */
            v->sort = (enum pt_rank_key)((v->sort + 1) % PT_RANK_COUNT);
            l->o->sort = (enum pt_sort)v->sort;
            break;
        case 'i':
            v->show_idle = !v->show_idle;
            l->o->show_idle = v->show_idle;
            break;
        case ' ':
            v->paused = !v->paused;
            break;
        case 'c':
            v->chains = !v->chains;
            break;
        case 'h':
        case '?':
            v->help = !v->help;
            break;
        default:   /* anything else (an arrow's escape, say) closes the help */
            v->help = false;
        }
    }
    live_draw(l, NULL);
    return true;
}

void live_suspend(struct live *l)
{
    bool was_on = l->on;
    if (was_on) {
        fflush(l->out);
        terminal_leave();
    }
    raise(SIGSTOP);   /* what SIGTSTP would have done, had it not been blocked */
    if (!was_on)
        return;
    /* Continued, perhaps in the background (bg): keys only in the foreground. */
    l->key_fd = terminal_can_read_keys(STDIN_FILENO) ? STDIN_FILENO : -1;
    if (terminal_enter(fileno(l->out), l->key_fd))
        l->key_fd = -1;
    l->view.keys = l->key_fd >= 0;
    fit(l);
    live_draw(l, NULL);
}

void live_stop(struct live *l)
{
    if (!l->on)
        return;
    fflush(l->out);
    terminal_leave();
    l->on = false;
    l->o->sort = l->given.sort;
    l->o->show_idle = l->given.show_idle;
    l->o->top = l->given.top;
    live_view_free(&l->view);
}
