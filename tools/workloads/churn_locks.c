/* Contention spread over many short-lived locks, as a server's per-request
 * or per-transaction lock objects: far more distinct contended blockers
 * than a tracer's table holds.
 *
 * PAIRS pairs of threads walk their own share of LOCKS mutexes, each one
 * once: the leader takes mutex k and holds it HOLD_US, the follower waits
 * until the leader holds it and then locks it too, so that every mutex has
 * exactly one blocked lock() call (timed by the follower), and then both
 * move on to mutex k+1. The mutexes sit side by side in one array, so each
 * has its own address and none is ever reused.
 *
 * With -s SITES (up to 256), the follower's blocked lock() of mutex k is
 * made in function lock_at_NNNN number k % SITES: each its own waiting
 * site, as a program whose lock objects are made all over its code.
 *
 * usage: churn_locks [-p PAIRS] [-n LOCKS] [-u HOLD_US] [-s SITES] [-r REPORT.json]
 * The report: {"locks":N,"blocked":N,"blocked_ns":NS,"faulted":N,"pid":N}
 * (blocked: the follower's lock() calls that found the mutex taken and
 * slept; faulted: those of them that took a page fault too, which may
 * have been the sleep). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "workload_time.h"

static pthread_mutex_t *locks;
static int nlocks = 60000, npairs = 4, nsites;

/* 256 functions that lock a mutex, named in base 4 (noipa: not merged;
 * the barrier after the call: no tail call, so each is a frame). */
#define LOCK_AT(n)                                                        \
    static __attribute__((noipa)) void lock_at_##n(pthread_mutex_t *m) \
    {                                                                     \
        pthread_mutex_lock(m);                                            \
        __asm__ volatile("" ::: "memory");                                \
    }
#define LOCK_AT4(n) LOCK_AT(n##0) LOCK_AT(n##1) LOCK_AT(n##2) LOCK_AT(n##3)
#define LOCK_AT16(n) LOCK_AT4(n##0) LOCK_AT4(n##1) LOCK_AT4(n##2) LOCK_AT4(n##3)
#define LOCK_AT64(n) LOCK_AT16(n##0) LOCK_AT16(n##1) LOCK_AT16(n##2) LOCK_AT16(n##3)
LOCK_AT64(0) LOCK_AT64(1) LOCK_AT64(2) LOCK_AT64(3)
#define REF(n) lock_at_##n,
#define REF4(n) REF(n##0) REF(n##1) REF(n##2) REF(n##3)
#define REF16(n) REF4(n##0) REF4(n##1) REF4(n##2) REF4(n##3)
#define REF64(n) REF16(n##0) REF16(n##1) REF16(n##2) REF16(n##3)
static void (*const lock_at[256])(pthread_mutex_t *) = {REF64(0) REF64(1) REF64(2) REF64(3)};
static long hold_us = 100;
static _Atomic uint64_t blocked, blocked_ns, faulted;

struct pair {
    int first, last;          /* this pair's mutexes: [first, last) */
    _Atomic int held;         /* the mutex the leader holds now, or -1 */
    _Atomic int done;         /* mutexes the follower has taken and let go */
};

static void *leader(void *arg)
{
    struct pair *p = arg;
    for (int k = p->first; k < p->last; k++) {
        pthread_mutex_lock(&locks[k]);
        atomic_store(&p->held, k);
        sleep_us(hold_us);
        pthread_mutex_unlock(&locks[k]);
        /* The next mutex only once the follower is through this one. */
        while (atomic_load(&p->done) <= k - p->first)
            sched_yield();
    }
    return NULL;
}

static void *follower(void *arg)
{
    struct pair *p = arg;
    for (int k = p->first; k < p->last; k++) {
        while (atomic_load(&p->held) != k)
            sched_yield();
        if (pthread_mutex_trylock(&locks[k]) != 0) {
            /* Counted only if it slept: a follower held up between the
             * trylock and the lock (a busy machine) may find it free. */
            struct rusage r0, r1;
            getrusage(RUSAGE_THREAD, &r0);
            uint64_t t0 = now_ns();
            if (nsites)
                lock_at[k % nsites](&locks[k]);
            else
                pthread_mutex_lock(&locks[k]);
            uint64_t t1 = now_ns();
            getrusage(RUSAGE_THREAD, &r1);
            if (r1.ru_nvcsw > r0.ru_nvcsw) {
                blocked_ns += t1 - t0;
                blocked++;
                /* A fault inside lock() can sleep too (on the mmap lock):
                 * such a call may not have slept in the futex at all. */
                if (r1.ru_minflt + r1.ru_majflt > r0.ru_minflt + r0.ru_majflt)
                    faulted++;
            }
        }
        pthread_mutex_unlock(&locks[k]);
        atomic_fetch_add(&p->done, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *report = NULL;
    int c;
    while ((c = getopt(argc, argv, "p:n:u:s:r:")) != -1) {
        switch (c) {
        case 's': nsites = atoi(optarg); break;
        case 'p': npairs = atoi(optarg); break;
        case 'n': nlocks = atoi(optarg); break;
        case 'u': hold_us = atol(optarg); break;
        case 'r': report = optarg; break;
        default:
            fprintf(stderr, "usage: %s [-p PAIRS] [-n LOCKS] [-u HOLD_US] [-s SITES] [-r REPORT]\n", argv[0]);
            return 1;
        }
    }
    if (npairs < 1 || npairs > 64 || nlocks < npairs || hold_us < 1 || nsites < 0 || nsites > 256) {
        fprintf(stderr, "churn_locks: bad arguments (1 <= PAIRS <= 64, LOCKS >= PAIRS, HOLD_US >= 1, SITES <= 256)\n");
        return 1;
    }
    locks = calloc((size_t)nlocks, sizeof(*locks));
    struct pair *pairs = calloc((size_t)npairs, sizeof(*pairs));
    pthread_t *th = calloc(2 * (size_t)npairs, sizeof(*th));
    if (!locks || !pairs || !th) {
        perror("churn_locks");
        return 1;
    }
    for (int i = 0; i < nlocks; i++)
        pthread_mutex_init(&locks[i], NULL);
    for (int i = 0; i < npairs; i++) {
        pairs[i].first = (int)((long)nlocks * i / npairs);
        pairs[i].last = (int)((long)nlocks * (i + 1) / npairs);
        atomic_store(&pairs[i].held, -1);
        pthread_create(&th[2 * i], NULL, leader, &pairs[i]);
        pthread_create(&th[2 * i + 1], NULL, follower, &pairs[i]);
    }
    for (int i = 0; i < 2 * npairs; i++)
        pthread_join(th[i], NULL);

    FILE *f = report ? fopen(report, "w") : stdout;
    if (!f) {
        perror(report);
        return 1;
    }
    fprintf(f, "{\"locks\":%d,\"blocked\":%llu,\"blocked_ns\":%llu,\"faulted\":%llu,\"pid\":%d}\n", nlocks,
            (unsigned long long)blocked, (unsigned long long)blocked_ns, (unsigned long long)faulted, (int)getpid());
    if (f != stdout && fclose(f)) {
        perror(report);
        return 1;
    }
    return 0;
}
