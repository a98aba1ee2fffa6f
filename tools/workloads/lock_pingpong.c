/* Two threads take turns holding one pthread mutex, with no work outside
 * it: Free Lunch's reference case, whose CSP is 0.5 (one thread always
 * holds, the other always waits). The hold is a nanosleep, which is
 * working time by CSP's definition (it is no wait on a wait-role blocker),
 * and leaves the CPUs free, so the waiter is never kept from its wait. Prints {"rounds":N,"lock_ns":N} at the end,
 * lock_ns being the time both threads spent in pthread_mutex_lock.
 * With -t 1 a single thread locks alone: nothing ever waits.
 * usage: lock_pingpong [-s SECONDS] [-h HOLD_US] [-t 1|2] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload_time.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t deadline;
static _Atomic uint64_t rounds, lock_ns;
static long hold_us = 500;

static void *player(void *arg)
{
    (void)arg;
    while (now_ns() < deadline) {
        uint64_t t0 = now_ns();
        pthread_mutex_lock(&lock);
        lock_ns += now_ns() - t0;
        sleep_us(hold_us);
        rounds++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = 3;
    int players = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-s") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "-h") == 0)
            hold_us = atol(argv[i + 1]);
        else if (strcmp(argv[i], "-t") == 0)
            players = atoi(argv[i + 1]) == 1 ? 1 : 2;
    }
    /* The players stop themselves; meanwhile main waits in pthread_join, a
     * wait-role wait, so it adds nothing to the working time. */
    deadline = now_ns() + (uint64_t)(seconds * 1e9);
    pthread_t t[2];
    for (int i = 0; i < players; i++)
        pthread_create(&t[i], NULL, player, NULL);
    for (int i = 0; i < players; i++)
        pthread_join(t[i], NULL);
    printf("{\"rounds\":%llu,\"lock_ns\":%llu}\n", (unsigned long long)rounds, (unsigned long long)lock_ns);
    return 0;
}
