/* Threads that wait and die young: THREADS threads each wait WAIT ms on a
 * condition nobody signals (a timed wait), then exit; the main thread
 * joins them and then sleeps REST ms. Prints the threads' lives as each
 * one timed itself, and the main thread's since it began, both lower
 * bounds of what the kernel saw them live.
 * usage: short_threads [-n THREADS] [-w WAIT_MS] [-s REST_MS] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "workload_time.h"

#define MAX_THREADS 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static long wait_ms = 20;
static _Atomic uint64_t lives_ns;

static void *wait_and_die(void *arg)
{
    (void)arg;
    uint64_t born = now_ns();
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += wait_ms / 1000;
    deadline.tv_nsec += (wait_ms % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&lock);
    while (pthread_cond_timedwait(&never, &lock, &deadline) == 0)
        ;
    pthread_mutex_unlock(&lock);
    lives_ns += now_ns() - born;
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t start = now_ns();
    int threads = 16, c;
    long rest_ms = 300;
    while ((c = getopt(argc, argv, "n:w:s:")) != -1) {
        if (c == 'n') threads = atoi(optarg);
        else if (c == 'w') wait_ms = atol(optarg);
        else if (c == 's') rest_ms = atol(optarg);
        else return 1;
    }
    if (threads < 1 || threads > MAX_THREADS || wait_ms < 1 || rest_ms < 0)
        return 1;
    pthread_t t[MAX_THREADS];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, wait_and_die, NULL))
            return 1;
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    sleep_us(rest_ms * 1000);
    printf("{\"pid\":%d,\"threads\":%d,\"thread_lives_ns\":%llu,\"main_ns\":%llu}\n", getpid(), threads,
           (unsigned long long)lives_ns, (unsigned long long)(now_ns() - start));
    return 0;
}
