#include "phases.h"
#include "oom.h"

#include <stdbool.h>
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
            ph->open--;
            *cur = -1;
        }
        return;
    }
    if (*cur < 0) {
        if (ph->n == ph->cap) {
            int cap = ph->cap ? 2 * ph->cap : 16;
            struct phase *p = realloc(ph->p, (size_t)cap * sizeof(*p));
            if (!p) {
                out_of_memory("phases");
            }
            ph->p = p;
            ph->cap = cap;
        }
        ph->p[ph->n] = (struct phase){.pid = pid, .id = id, .start = win_start, .open = true};
        snprintf(ph->p[ph->n].cls, sizeof(ph->p[ph->n].cls), "%s", cls ? cls : "");
        snprintf(ph->p[ph->n].name, sizeof(ph->p[ph->n].name), "%s", name ? name : "");
        *cur = ph->n++;
        ph->open++;
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

bool phases_trim(struct phases *ph, int *map)
{
    if (ph->n < 2 * PHASES_KEEP)
        return false;
    int closed = 0;
    for (int i = 0; i < ph->n; i++)
        closed += !ph->p[i].open;
    int drop = closed - PHASES_KEEP, kept = 0;
    for (int i = 0; i < ph->n; i++) {
        if (drop > 0 && !ph->p[i].open) {
            drop--;
            ph->forgotten++;
            map[i] = -1;
            continue;
        }
        map[i] = kept;
        ph->p[kept++] = ph->p[i];
    }
    ph->n = kept;
    return true;
}

void phases_free(struct phases *ph)
{
    free(ph->p);
    memset(ph, 0, sizeof(*ph));
}
