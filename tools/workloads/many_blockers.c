/* Many live blockers and many threads at a fixed rate of waits, for
 * measuring how a tracer's cost grows with the number of blockers and
 * threads rather than with the number of events.
 *
 * THREADS threads share BLOCKERS futex words; thread i waits on blockers
 * i, i+THREADS, i+2*THREADS, ... in turn (all of them are waited on when
 * BLOCKERS >= THREADS; with fewer blockers, threads share them). Every wait
 * is a FUTEX_WAIT that nobody wakes and that ends by its timeout, chosen so
 * that all threads together wait about RATE times a second.
 *
 * usage: many_blockers [-t THREADS] [-b BLOCKERS] [-r RATE] [-s SECONDS]
 * prints: ops_per_sec (waits a second), blockers_waited, threads, waits (the
 * FUTEX_WAIT calls made, every one of which slept until its timeout) */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int nthreads = 4, nblockers = 100;
static double rate = 20000, seconds = 5;
static uint32_t *words;
static _Atomic uint64_t waits;
static _Atomic int stop;
static _Atomic uint8_t *waited;   /* blocker i was waited on at least once */

static void *waiter(void *arg)
{
    int self = (int)(intptr_t)arg;
    /* Each thread waits RATE / THREADS times a second. */
    uint64_t ns = (uint64_t)(1e9 * nthreads / rate);
    struct timespec timeout = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    uint64_t mine = 0;
    int b = self % nblockers;
    while (!stop) {
        syscall(SYS_futex, &words[b], FUTEX_WAIT_PRIVATE, 0, &timeout, NULL, 0);
        atomic_store_explicit(&waited[b], 1, memory_order_relaxed);
        mine++;
        b += nthreads;
        if (b >= nblockers)
            b = self % nblockers;
    }
    atomic_fetch_add(&waits, mine);
    return NULL;
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "t:b:r:s:")) != -1) {
        if (c == 't') nthreads = atoi(optarg);
        else if (c == 'b') nblockers = atoi(optarg);
        else if (c == 'r') rate = atof(optarg);
        else if (c == 's') seconds = atof(optarg);
        else return 1;
    }
    if (nthreads < 1 || nblockers < 1 || rate <= 0 || seconds <= 0) {
        fprintf(stderr, "many_blockers: -t, -b, -r and -s must be positive\n");
        return 1;
    }
    words = calloc((size_t)nblockers, sizeof(*words));
    waited = calloc((size_t)nblockers, 1);
    pthread_t *tids = calloc((size_t)nthreads, sizeof(*tids));
    if (!words || !waited || !tids)
        return 1;
    /* Small stacks: 1024 threads of the default 8 MiB would be 8 GiB of
     * address space for a program that needs almost none. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&tids[i], &attr, waiter, (void *)(intptr_t)i)) {
            fprintf(stderr, "many_blockers: cannot start thread %d\n", i);
            return 1;
        }
    struct timespec run = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&run, NULL);
    stop = 1;
    for (int i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    int live = 0;
    for (int i = 0; i < nblockers; i++)
        live += waited[i];
    printf("blockers_waited %d\nthreads %d\nops_per_sec %.0f\nwaits %llu\n", live, nthreads, (double)waits / took,
           (unsigned long long)waits);
    return 0;
}
