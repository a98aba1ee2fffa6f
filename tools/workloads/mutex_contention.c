/* A pthread workload whose contention is known in advance and measured by
 * the workload itself, so parktrace's figures can be checked against it.
 *
 * THREADS workers share up to four named global mutexes (worker i uses mutex
 * i % MUTEXES), each held for its own preset time, with a think time between
 * acquisitions so a woken waiter is rarely overtaken (one blocked lock call =
 * one futex wait). A
 * producer/consumer pair of threads exercises a condition variable.
 *
 * usage: mutex_contention [-t THREADS] [-m MUTEXES] [-s SECONDS] [-r REPORT.json] [-l LINGER_S]
 * -l: after the report, stay alive LINGER_S seconds with no thread but main
 * (a tracer's view of a live process's finished waits).
 * The report holds, per mutex, the lock calls that blocked and the time
 * they spent blocked, the most threads ever inside a blocking lock() call
 * at once, the acquisitions and the time the lock was held
 * (measured: a sleep overshoots its preset time), and the same for the condition variable waits. */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workload_time.h"

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t journal_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_nonempty = PTHREAD_COND_INITIALIZER;

static struct lock_spec {
    const char *name;
    pthread_mutex_t *m;
    long hold_us;
    _Atomic uint64_t blocked, blocked_ns, acquired, held_ns;
    _Atomic int in_lock, peak_in_lock;   /* threads inside a blocking lock() call */
} locks[] = {
    {.name = "cache_lock", .m = &cache_lock, .hold_us = 4000},
    {.name = "table_lock", .m = &table_lock, .hold_us = 2000},
    {.name = "journal_lock", .m = &journal_lock, .hold_us = 1000},
    {.name = "stats_lock", .m = &stats_lock, .hold_us = 500},
};

static int nthreads = 4, nlocks = 2;
static double seconds = 3;
static _Atomic int stop;
static int queued;
static _Atomic uint64_t cond_waits, cond_wait_ns;

/* Locks M, timing the call only when the lock was taken by someone else. */
static void timed_lock(struct lock_spec *l)
{
    if (pthread_mutex_trylock(l->m) == 0)
        return;
    /* A thread inside lock() may wait: their peak bounds the waiters'. */
    int n = ++l->in_lock, peak = l->peak_in_lock;
    while (n > peak && !atomic_compare_exchange_weak(&l->peak_in_lock, &peak, n))
        ;
    uint64_t t0 = now_ns();
    pthread_mutex_lock(l->m);
    l->blocked_ns += now_ns() - t0;
    l->in_lock--;
    l->blocked++;
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    struct lock_spec *l = &locks[id % (unsigned)nlocks];
    while (!stop) {
        timed_lock(l);
        l->acquired++;
        uint64_t t0 = now_ns();
        sleep_us(l->hold_us);
        l->held_ns += now_ns() - t0;
        pthread_mutex_unlock(l->m);
        /* Think time: shorter than the holds so the locks stay contended,
         * long enough that a woken waiter wins its race. */
        sleep_us(l->hold_us / 2 + 100 * (long)(id / (unsigned)nlocks));
    }
    return NULL;
}

static void *producer(void *arg)
{
    (void)arg;
    while (!stop) {
        sleep_us(20000);
        pthread_mutex_lock(&queue_lock);
        queued++;
        pthread_cond_signal(&queue_nonempty);
        pthread_mutex_unlock(&queue_lock);
    }
    pthread_mutex_lock(&queue_lock);
    queued = -1;
    pthread_cond_broadcast(&queue_nonempty);
    pthread_mutex_unlock(&queue_lock);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&queue_lock);
    while (queued >= 0) {
        if (queued > 0) {
            queued--;
            continue;
        }
        uint64_t t0 = now_ns();
        pthread_cond_wait(&queue_nonempty, &queue_lock);
        cond_wait_ns += now_ns() - t0;
        cond_waits++;
    }
    pthread_mutex_unlock(&queue_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *report = NULL;
    double linger = 0;
    int c;
    while ((c = getopt(argc, argv, "t:m:s:r:l:")) != -1) {
        switch (c) {
        case 't': nthreads = atoi(optarg); break;
        case 'm': nlocks = atoi(optarg); break;
        case 's': seconds = atof(optarg); break;
        case 'r': report = optarg; break;
        case 'l': linger = atof(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-t THREADS] [-m MUTEXES 1-4] [-s SECONDS] [-r REPORT] [-l LINGER_S]\n",
                    argv[0]);
            return 1;
        }
    }
    if (nthreads < 1 || nthreads > 256 || nlocks < 1 || nlocks > 4 || seconds <= 0) {
        fprintf(stderr, "mutex_contention: bad arguments\n");
        return 1;
    }
    pthread_t th[258];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
    pthread_create(&th[nthreads], NULL, producer, NULL);
    pthread_create(&th[nthreads + 1], NULL, consumer, NULL);
    sleep_us((long)(seconds * 1e6));
    stop = 1;
    for (int i = 0; i < nthreads + 2; i++)
        pthread_join(th[i], NULL);

    FILE *f = report ? fopen(report, "w") : stdout;
    if (!f) {
        perror(report);
        return 1;
    }
    fprintf(f, "{\"pid\":%d,\"threads\":%d,\"mutexes\":[", getpid(), nthreads);
    for (int i = 0; i < nlocks; i++)
        fprintf(f, "%s{\"name\":\"%s\",\"addr\":\"%p\",\"hold_ns\":%ld,\"blocked\":%llu,"
                   "\"blocked_ns\":%llu,\"acquired\":%llu,\"held_ns\":%llu,\"peak_in_lock\":%d}",
                i ? "," : "", locks[i].name, (void *)locks[i].m, locks[i].hold_us * 1000,
                (unsigned long long)locks[i].blocked, (unsigned long long)locks[i].blocked_ns,
                (unsigned long long)locks[i].acquired, (unsigned long long)locks[i].held_ns,
                locks[i].peak_in_lock);
    fprintf(f, "],\"cond\":{\"name\":\"queue_nonempty\",\"addr\":\"%p\",\"waits\":%llu,\"wait_ns\":%llu}}\n",
            (void *)&queue_nonempty, (unsigned long long)cond_waits, (unsigned long long)cond_wait_ns);
    if (f != stdout)
        fclose(f);
    if (linger > 0)
        sleep_us((long)(linger * 1e6));
    return 0;
}
