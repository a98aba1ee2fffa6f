/* Phases (Free Lunch): the stretches of intervals during which a lock's CSP
 * stays at or above --phase-threshold. */
#ifndef PT_PHASES_H
#define PT_PHASES_H
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct phase {
    int pid;
    uint64_t id;
    char cls[160];                /* a copy: its blocker's class string leaves with its slot */
    char name[64];                /* its row's name (a global variable), or "" */
    struct timespec start, end;   /* end is meaningful once closed */
    bool open;
    double peak, sum;
    int intervals;
};

struct phases {
    struct phase *p;
    int n, cap;
    int open;                     /* of them, open */
    uint64_t forgotten;           /* closed phases let go (phases_trim) */
};

/* Closed phases kept: a long run's older ones go, counted. */
#define PHASES_KEEP 512

/* Feeds one interval of one lock. *CUR is the lock's open phase (-1: none);
 * the interval began at WIN_START (wall clock). */
void phases_feed(struct phases *ph, int *cur, int pid, uint64_t id, const char *cls, const char *name, double csp,
                 double threshold, struct timespec win_start);

double phase_mean(const struct phase *p);

/* Past 2 * PHASES_KEEP phases, lets the oldest closed ones go until
 * PHASES_KEEP are closed; MAP (room for ph->n) gets each old index's new
 * one, or -1. Returns whether anything moved. */
bool phases_trim(struct phases *ph, int *map);

void phases_free(struct phases *ph);

#endif
