/* Two threads take turns holding one pthread mutex, with no work outside
 * it: Free Lunch's reference case, whose CSP is 0.5 (one thread always
 * holds, the other always waits). The hold is a busy loop on the CPU (a
 * sleep is idle time, metrics.md), so the players need a core each. Prints
 * {"rounds":N,"lock_ns":N,"alive_ns":N} at the end, lock_ns being the time
 * both threads spent in pthread_mutex_lock and alive_ns their lifetimes.
 * With -t 1 a single thread locks alone: nothing ever waits. With -t N
 * (up to 16) and -o OUT_US, N workers each also work OUT_US (spinning)
 * outside the lock: Free Lunch's "ten workers" case.
 * The other threads only sleep, which must not change the CSP: main waits
 * in pthread_join, or with -m sleep first in nanosleep until the players'
 * end; -e N adds N threads idle in epoll_wait until then.
 * usage: lock_pingpong [-s SECONDS] [-h HOLD_US] [-t N] [-o OUT_US] [-m join|sleep] [-e N] */
#include <pthread.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload_time.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t deadline;
static _Atomic uint64_t rounds, lock_ns, alive_ns;
static long hold_us = 500, out_us = 0;

static void spin_us(long us)
{
    uint64_t end = now_ns() + (uint64_t)us * 1000;
    while (now_ns() < end)
        ;
}

static void *player(void *arg)
{
    (void)arg;
    uint64_t born = now_ns();
    while (now_ns() < deadline) {
        uint64_t t0 = now_ns();
        pthread_mutex_lock(&lock);
        lock_ns += now_ns() - t0;
        spin_us(hold_us);
        rounds++;
        pthread_mutex_unlock(&lock);
        spin_us(out_us);
    }
    alive_ns += now_ns() - born;
    return NULL;
}

/* Waits in epoll_wait on an empty set until the players' deadline. */
static void *idler(void *arg)
{
    (void)arg;
    int ep = epoll_create1(0);
    struct epoll_event ev;
    for (uint64_t t; ep >= 0 && (t = now_ns()) < deadline;)
        epoll_wait(ep, &ev, 1, (int)((deadline - t) / 1000000) + 1);
    if (ep >= 0)
        close(ep);
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = 3;
    int players = 2, idlers = 0;
    bool main_sleeps = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-s") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "-h") == 0)
            hold_us = atol(argv[i + 1]);
        else if (strcmp(argv[i], "-t") == 0)
            players = atoi(argv[i + 1]) < 1 ? 1 : atoi(argv[i + 1]) > 16 ? 16 : atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-o") == 0)
            out_us = atol(argv[i + 1]);
        else if (strcmp(argv[i], "-m") == 0)
            main_sleeps = strcmp(argv[i + 1], "sleep") == 0;
        else if (strcmp(argv[i], "-e") == 0)
            idlers = atoi(argv[i + 1]) > 64 ? 64 : atoi(argv[i + 1]);
    }
    /* The players stop themselves; meanwhile main waits in pthread_join, a
     * wait-role wait, or sleeps first: idle either way. */
    deadline = now_ns() + (uint64_t)(seconds * 1e9);
    pthread_t t[16], idle[64];
    for (int i = 0; i < idlers; i++)
        pthread_create(&idle[i], NULL, idler, NULL);
    for (int i = 0; i < players; i++)
        pthread_create(&t[i], NULL, player, NULL);
    if (main_sleeps) {
        uint64_t n = now_ns();
        if (n < deadline)
            sleep_us((long)((deadline - n) / 1000));
    }
    for (int i = 0; i < players; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < idlers; i++)
        pthread_join(idle[i], NULL);
    printf("{\"rounds\":%llu,\"lock_ns\":%llu,\"alive_ns\":%llu,\"pid\":%d}\n", (unsigned long long)rounds,
           (unsigned long long)lock_ns, (unsigned long long)alive_ns, (int)getpid());
    return 0;
}
