#include "phases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void phases_feed(struct phases *ph, int *cur, int pid, uint64_t id, const char *cls, const char *name, double csp,
                 double threshold, struct timespec win_start)
{
    if (csp < threshold) {
        /* The first interval below the threshold ends the phase. */
        if (*cur >= 0) {
            ph->p[*cur].open = false;
            ph->p[*cur].end = win_start;
            *cur = -1;
        }
        return;
    }
    if (*cur < 0) {
        if (ph->n == ph->cap) {
            ph->cap = ph->cap ? 2 * ph->cap : 16;
            ph->p = realloc(ph->p, (size_t)ph->cap * sizeof(*ph->p));
        }
        ph->p[ph->n] = (struct phase){.pid = pid, .id = id, .cls = cls, .start = win_start, .open = true};
        snprintf(ph->p[ph->n].name, sizeof(ph->p[ph->n].name), "%s", name ? name : "");
        *cur = ph->n++;
    }
    struct phase *p = &ph->p[*cur];
    if (csp > p->peak)
        p->peak = csp;
    p->sum += csp;
    p->intervals++;
}

double phase_mean(const struct phase *p)
{
    return p->intervals ? p->sum / p->intervals : 0;
}

void phases_free(struct phases *ph)
{
    free(ph->p);
    memset(ph, 0, sizeof(*ph));
}
