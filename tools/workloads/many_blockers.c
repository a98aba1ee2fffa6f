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
 * FUTEX_WAIT calls made) and slept (the sleeps they made: the waiters'
 * voluntary context switches over their loops). A call need not sleep: a
 * thread held off its CPU past the timeout between arming it and sleeping
 * (a host stealing the CPU) finds it expired and returns at once. */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int nthreads = 4, nblockers = 100;
static double rate = 20000, seconds = 5;
static uint32_t *words;
static _Atomic uint64_t waits, slept;
static _Atomic int stop;
static _Atomic uint8_t *waited;   /* blocker i was waited on at least once */

/* This thread's voluntary context switches so far. */
static uint64_t voluntary_switches(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nvcsw : 0;
}

static void *waiter(void *arg)
{
    int self = (int)(intptr_t)arg;
    /* Each thread waits RATE / THREADS times a second. */
    uint64_t ns = (uint64_t)(1e9 * nthreads / rate);
    struct timespec timeout = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    uint64_t mine = 0;
    int b = self % nblockers;
    /* Counted from here: the loop touches nothing new (main wrote the
     * arrays), so its only sleeps are its futex waits. */
    uint64_t switches = voluntary_switches();
    while (!stop) {
        syscall(SYS_futex, &words[b], FUTEX_WAIT_PRIVATE, 0, &timeout, NULL, 0);
        atomic_store_explicit(&waited[b], 1, memory_order_relaxed);
        mine++;
        b += nthreads;
        if (b >= nblockers)
            b = self % nblockers;
    }
    switches = voluntary_switches() - switches;
    atomic_fetch_add(&waits, mine);
    atomic_fetch_add(&slept, switches);
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
    /* Their pages faulted in now, not by a waiter (whose fault could sleep
     * on the address space's lock while main maps a thread's stack). */
    memset(words, 0, (size_t)nblockers * sizeof(*words));
    memset((void *)waited, 0, (size_t)nblockers);
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
    printf("blockers_waited %d\nthreads %d\nops_per_sec %.0f\nwaits %llu\nslept %llu\n", live, nthreads,
           (double)waits / took, (unsigned long long)waits, (unsigned long long)slept);
    return 0;
}
