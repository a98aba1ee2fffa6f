/* Futex-heavy benchmark: THREADS threads share one mutex around a short
 * critical section. Prints operations per second on its last line.
 * usage: futex_hot [-t THREADS] [-s SECONDS] [-w WORK] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t shared_counter;
static _Atomic int stop;
static _Atomic uint64_t ops;
static int work = 200;

static void *worker(void *arg)
{
    (void)arg;
    uint64_t n = 0;
    volatile uint64_t sink = 0;
    while (!stop) {
        pthread_mutex_lock(&hot_lock);
        for (int i = 0; i < work / 4; i++)
            shared_counter++;
        pthread_mutex_unlock(&hot_lock);
        for (int i = 0; i < work; i++)
            sink += (uint64_t)i;
        n++;
    }
    ops += n;
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = 4, c;
    double seconds = 2;
    while ((c = getopt(argc, argv, "t:s:w:")) != -1) {
        if (c == 't') threads = atoi(optarg);
        else if (c == 's') seconds = atof(optarg);
        else if (c == 'w') work = atoi(optarg);
        else return 1;
    }
    if (threads < 1 || threads > 1024 || seconds <= 0)
        return 1;
    pthread_t *th = calloc((size_t)threads, sizeof(*th));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    usleep((useconds_t)(seconds * 1e6));
    stop = 1;
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("ops_per_sec %.0f\n", (double)ops / el);
    return 0;
}
