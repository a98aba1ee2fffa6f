/* Worst case for a scheduler-based tracer: two threads hand a turn back and
 * forth through a mutex and condition variable, so every operation is a
 * futex wait that sleeps and two context switches. Prints hand-offs per
 * second on its last line.
 * usage: futex_pingpong [-s SECONDS] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;
static _Atomic int stop;
static uint64_t handoffs;

static void *player(void *arg)
{
    int me = (int)(intptr_t)arg;
    pthread_mutex_lock(&turn_lock);
    while (!stop) {
        while (turn != me && !stop)
            pthread_cond_wait(&turn_changed, &turn_lock);
        turn = !me;
        handoffs++;
        pthread_cond_signal(&turn_changed);
    }
    pthread_cond_broadcast(&turn_changed);
    pthread_mutex_unlock(&turn_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = 2;
    int c;
    while ((c = getopt(argc, argv, "s:")) != -1) {
        if (c == 's') seconds = atof(optarg);
        else return 1;
    }
    pthread_t a, b;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_create(&a, NULL, player, (void *)0);
    pthread_create(&b, NULL, player, (void *)1);
    usleep((useconds_t)(seconds * 1e6));
    stop = 1;
    pthread_mutex_lock(&turn_lock);
    pthread_cond_broadcast(&turn_changed);
    pthread_mutex_unlock(&turn_lock);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("ops_per_sec %.0f\n", (double)handoffs / el);
    return 0;
}
