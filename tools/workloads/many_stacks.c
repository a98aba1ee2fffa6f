/* PATHS distinct waiter stacks, one wait each: more than parktrace's stack
 * tables hold (16384), so some stacks must be dropped, and counted.
 *
 * Path p is a chain of DEPTH calls, the i-th through branch_a or branch_b
 * by bit i of p (distinct return addresses per path), ending in a
 * FUTEX_WAIT on idle_word that nobody wakes and that times out after
 * 100 us. THREADS threads share the paths. The leaf's frame size varies
 * with p, so no two successive waits of a thread share their stack
 * pointer: a stack cache keyed by (ip, sp) cannot stand in for the walk.
 * With -f the leaf's frame is fixed: every wait is at the same ip and sp,
 * and only the return addresses tell the paths apart.
 * First main waits once and sleeps 300 ms, so that parktrace has this
 * program's unwind tables before the paths wait. Last, main waits once
 * more from late_wait(), a call path of its own seen
 * after the tables have filled.
 *
 * usage: many_stacks [-p PATHS] [-t THREADS] [-f]
 * prints one JSON line: pid, idle_word's address, the paths and how many of
 * their waits (and of late_wait's) ended by their timeout. */
#include <alloca.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload_time.h"

#define DEPTH 15
/* Not inlined, cloned or merged with the other branch: each keeps its frame. */
#define BRANCH __attribute__((noipa))

_Atomic uint32_t idle_word;
static _Atomic int timed_out;
static int paths = 24576, nthreads = 4, fixed_frame;

BRANCH static void walk(unsigned p, int level);

BRANCH static void leaf(unsigned p)
{
    volatile char *pad = alloca(16 + 16 * (fixed_frame ? 0 : p & 63));
    pad[0] = 0;
    struct timespec ts = {0, 100000};
    if (syscall(SYS_futex, &idle_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0) == -1 && errno == ETIMEDOUT)
        timed_out++;
    __asm__ volatile("" ::: "memory");   /* no tail call: the frame stays */
}

BRANCH static void branch_a(unsigned p, int level)
{
    walk(p, level + 1);
    __asm__ volatile("" ::: "memory");
}

BRANCH static void branch_b(unsigned p, int level)
{
    walk(p, level + 1);
    __asm__ volatile("" ::: "memory");
}

BRANCH static void walk(unsigned p, int level)
{
    if (level == DEPTH)
        leaf(p);
    else if (p >> level & 1)
        branch_b(p, level);
    else
        branch_a(p, level);
    __asm__ volatile("" ::: "memory");
}

BRANCH static int late_wait(void)
{
    struct timespec ts = {0, 1000000};
    int timed_out = syscall(SYS_futex, &idle_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0) == -1 && errno == ETIMEDOUT;
    __asm__ volatile("" ::: "memory");
    return timed_out;
}

static void *worker(void *arg)
{
    for (int p = (int)(intptr_t)arg; p < paths; p += nthreads)
        walk((unsigned)p, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "p:t:f")) != -1) {
        if (c == 'f') fixed_frame = 1;
        else if (c == 'p') paths = atoi(optarg);
        else if (c == 't') nthreads = atoi(optarg);
        else return 1;
    }
    if (paths < 1 || paths > 1 << DEPTH || nthreads < 1 || nthreads > 64) {
        fprintf(stderr, "usage: many_stacks [-p PATHS<=%d] [-t THREADS<=64] [-f]\n", 1 << DEPTH);
        return 1;
    }
    struct timespec warm = {0, 1000000};
    syscall(SYS_futex, &idle_word, FUTEX_WAIT_PRIVATE, 0, &warm, NULL, 0);
    sleep_us(300000);
    pthread_t th[64];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    int late = late_wait();
    printf("{\"pid\":%d,\"addr\":\"%p\",\"paths\":%d,\"timed_out\":%d,\"late_timed_out\":%d}\n", getpid(),
           (void *)&idle_word, paths, (int)timed_out, late);
    return 0;
}
