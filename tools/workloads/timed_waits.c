/* Condition waits whose endings are known: TIMEOUTS timed waits that
 * nobody signals (each ends by its 10 ms timeout), then WAKEUPS waits that
 * a second thread signals after 5 ms.
 * usage: timed_waits [-t TIMEOUTS] [-w WAKEUPS] [-r REPORT.json] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate = PTHREAD_COND_INITIALIZER;
static int ticket, served;
static _Atomic int done;

static void *signaler(void *arg)
{
    (void)arg;
    struct timespec d = {0, 5000000};
    while (!done) {
        nanosleep(&d, NULL);
        pthread_mutex_lock(&gate_lock);
        if (ticket > served) {
            served++;
            pthread_cond_signal(&gate);
        }
        pthread_mutex_unlock(&gate_lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int timeouts = 20, wakeups = 30, c, timed_out = 0, woken = 0;
    const char *report = NULL;
    while ((c = getopt(argc, argv, "t:w:r:")) != -1) {
        if (c == 't') timeouts = atoi(optarg);
        else if (c == 'w') wakeups = atoi(optarg);
        else if (c == 'r') report = optarg;
        else return 1;
    }
    pthread_mutex_lock(&gate_lock);
    for (int i = 0; i < timeouts; i++) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_nsec += 10000000;
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
        /* Loop over spurious wake-ups until the deadline passes. */
        while (pthread_cond_timedwait(&gate, &gate_lock, &deadline) == 0)
            ;
        timed_out++;
    }
    pthread_mutex_unlock(&gate_lock);

    pthread_t t;
    pthread_create(&t, NULL, signaler, NULL);
    pthread_mutex_lock(&gate_lock);
    for (int i = 0; i < wakeups; i++) {
        int mine = ++ticket;
        while (served < mine)
            pthread_cond_wait(&gate, &gate_lock);
        woken++;
    }
    pthread_mutex_unlock(&gate_lock);
    done = 1;
    pthread_join(t, NULL);
    FILE *f = report ? fopen(report, "w") : stdout;
    if (!f)
        return 1;
    fprintf(f, "{\"pid\":%d,\"timeouts\":%d,\"wakeups\":%d}\n", getpid(), timed_out, woken);
    if (f != stdout)
        fclose(f);
    return 0;
}
