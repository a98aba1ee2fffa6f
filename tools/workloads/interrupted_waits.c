/* Untimed futex waits that signals interrupt, then one wake: how each wait
 * ended is known, so parktrace's wakeups can be checked against them.
 *
 * A waiter thread waits on a word with FUTEX_WAIT and no timeout, again
 * after each EINTR, until the word is set. The main thread sends it
 * SIGNALS SIGUSR1s, each once the waiter sleeps (its state in
 * /proc/self/task/TID/stat is S) and after the last one was seen; the
 * handler is installed without SA_RESTART, so each interrupts the wait.
 * Then it sets the word and wakes the waiter: one wait ends woken.
 *
 * usage: interrupted_waits [-n SIGNALS] [-r REPORT.json]
 * The report gives the word's address, the waits interrupted, the waits
 * woken and any other return. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload_time.h"

static uint32_t word;
static _Atomic int interrupted, woken, other, waiter_tid;

static long futex(uint32_t *w, int op, uint32_t val)
{
    return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

static void on_signal(int sig)
{
    (void)sig;
}

static void *waiter(void *arg)
{
    (void)arg;
    waiter_tid = (int)syscall(SYS_gettid);
    while (!__atomic_load_n(&word, __ATOMIC_ACQUIRE)) {
        long rc = futex(&word, FUTEX_WAIT_PRIVATE, 0);
        if (rc == -1 && errno == EINTR)
            interrupted++;
        else if (rc == 0)
            woken++;
        else if (!(rc == -1 && errno == EAGAIN))
            other++;
    }
    return NULL;
}

/* Whether thread TID sleeps (state S): the only sleep the waiter has is its wait. */
static int sleeping(int tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
    if (read_proc_file(path, buf, sizeof(buf)) < 0)
        return 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'S';
}

static void pause_ms(int ms)
{
    struct timespec d = {0, ms * 1000000L};
    nanosleep(&d, NULL);
}

int main(int argc, char **argv)
{
    int signals = 20, c;
    const char *report = NULL;
    while ((c = getopt(argc, argv, "n:r:")) != -1) {
        if (c == 'n')
            signals = atoi(optarg);
        else if (c == 'r')
            report = optarg;
        else {
            fprintf(stderr, "usage: %s [-n SIGNALS] [-r REPORT.json]\n", argv[0]);
            return 1;
        }
    }
    if (signals < 0 || signals > 10000) {
        fprintf(stderr, "interrupted_waits: bad -n\n");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;   /* no SA_RESTART: the wait returns EINTR */
    sigaction(SIGUSR1, &sa, NULL);

    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    while (!waiter_tid)
        pause_ms(1);
    for (int i = 0; i < signals; i++) {
        while (!sleeping(waiter_tid))
            pause_ms(1);
        pause_ms(2);
        pthread_kill(t, SIGUSR1);
        while (interrupted + other <= i)
            pause_ms(1);
    }
    while (!sleeping(waiter_tid))
        pause_ms(1);
    pause_ms(2);
    __atomic_store_n(&word, 1, __ATOMIC_RELEASE);
    futex(&word, FUTEX_WAKE_PRIVATE, 1);
    pthread_join(t, NULL);

    FILE *f = report ? fopen(report, "w") : stdout;
    if (!f) {
        perror(report);
        return 1;
    }
    fprintf(f, "{\"pid\":%d,\"addr\":\"%p\",\"interrupted\":%d,\"woken\":%d,\"other\":%d}\n", getpid(),
            (void *)&word, interrupted, woken, other);
    if (f != stdout)
        fclose(f);
    return 0;
}
