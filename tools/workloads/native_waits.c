/* One native blocking primitive at a time, its blocked time measured by the
 * workload itself, so parktrace's rows for it can be checked.
 *
 * MODE is one of:
 *   rwlock   readers block on rw_lock while a writer holds it (20 ms)
 *   sem      a waiter blocks in sem_wait on sem_items until a post (10 ms)
 *   join     main joins a thread that sleeps 20 ms
 *   barrier  three threads meet at barrier_point, arriving 5, 10, 15 ms late
 *   pi       a waiter blocks on pi_lock (PTHREAD_PRIO_INHERIT: FUTEX_LOCK_PI)
 *            while a holder keeps it 20 ms
 *   waitv    futex_waitv (syscall 449) on both words of waitv_words, 10 ms
 *            timeouts that nobody wakes
 *   file     FUTEX_WAIT (shared) on the first word of FILE, mapped
 *            MAP_SHARED: run it in two unrelated processes on one file
 * Each runs ROUNDS times (default 10).
 *
 * usage: native_waits MODE [-n ROUNDS] [-f FILE]
 * prints one JSON line: pid, mode, the blocker's address, the blocking calls
 * timed (calls), and their total time (wait_ns); calls that could not run
 * (say futex_waitv on an old kernel) make "unsupported" true. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload_time.h"

#define HOLD_US 20000

pthread_rwlock_t rw_lock = PTHREAD_RWLOCK_INITIALIZER;
sem_t sem_items;
pthread_barrier_t barrier_point;
pthread_mutex_t pi_lock;
uint32_t waitv_words[2];

static int rounds = 10;
static _Atomic int held_round = -1;   /* the round whose hold has begun */
static _Atomic uint64_t calls, wait_ns;
static bool unsupported;

static void timed(uint64_t t0)
{
    wait_ns += now_ns() - t0;
    calls++;
}

/* Waits until the holder has taken round R's lock: then a lock call blocks. */
static void await_hold(int r)
{
    while (held_round < r)
        sleep_us(500);
}

/* rwlock and pi: the holder's side, HOLD_US per round. */
static void *holder(void *arg)
{
    const char *mode = arg;
    for (int r = 0; r < rounds; r++) {
        if (*mode == 'r')
            pthread_rwlock_wrlock(&rw_lock);
        else
            pthread_mutex_lock(&pi_lock);
        held_round = r;
        sleep_us(HOLD_US);
        if (*mode == 'r')
            pthread_rwlock_unlock(&rw_lock);
        else
            pthread_mutex_unlock(&pi_lock);
        sleep_us(HOLD_US / 2);   /* the waiters take it meanwhile */
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    for (int r = 0; r < rounds; r++) {
        await_hold(r);
        uint64_t t0 = now_ns();
        if (pthread_rwlock_tryrdlock(&rw_lock)) {
            pthread_rwlock_rdlock(&rw_lock);
            timed(t0);
        }
        pthread_rwlock_unlock(&rw_lock);
    }
    return NULL;
}

static void *pi_waiter(void *arg)
{
    (void)arg;
    for (int r = 0; r < rounds; r++) {
        await_hold(r);
        uint64_t t0 = now_ns();
        if (pthread_mutex_trylock(&pi_lock)) {
            pthread_mutex_lock(&pi_lock);
            timed(t0);
        }
        pthread_mutex_unlock(&pi_lock);
    }
    return NULL;
}

static void *poster(void *arg)
{
    (void)arg;
    for (int r = 0; r < rounds; r++) {
        sleep_us(HOLD_US / 2);
        sem_post(&sem_items);
    }
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    sleep_us(HOLD_US);
    return NULL;
}

static void *meeter(void *arg)
{
    long late_us = 5000 * (1 + (long)(intptr_t)arg);
    for (int r = 0; r < rounds; r++) {
        sleep_us(late_us);
        uint64_t t0 = now_ns();
        pthread_barrier_wait(&barrier_point);
        timed(t0);
    }
    return NULL;
}

/* The kernel's struct futex_waitv, spelled out for older headers. */
struct waitv {
    uint64_t val, uaddr;
    uint32_t flags, reserved;
};

static void waitv_rounds(void)
{
    struct waitv w[2];
    for (int i = 0; i < 2; i++)
        w[i] = (struct waitv){.val = 0, .uaddr = (uintptr_t)&waitv_words[i], .flags = 2 /* FUTEX2_SIZE_U32 */};
    for (int r = 0; r < rounds; r++) {
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_nsec += 10000000;
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
        uint64_t t0 = now_ns();
        long rc = syscall(449, w, 2, 0, &deadline, CLOCK_MONOTONIC);
        if (rc == -1 && errno == ENOSYS) {
            unsupported = true;
            return;
        }
        if (rc == -1 && errno == ETIMEDOUT)
            timed(t0);
    }
}

static void *file_word(const char *path)
{
    int fd = open(path, O_RDWR);
    if (fd < 0 || ftruncate(fd, 4096)) {
        perror(path);
        exit(1);
    }
    uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (word == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    struct timespec t = {0, 10000000};
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = now_ns();
        if (syscall(SYS_futex, word, FUTEX_WAIT, 0, &t, NULL, 0) == -1 && errno == ETIMEDOUT)
            timed(t0);
    }
    return word;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "", *path = NULL;
    int c;
    optind = 2;
    while ((c = getopt(argc, argv, "n:f:")) != -1) {
        if (c == 'n') rounds = atoi(optarg);
        else if (c == 'f') path = optarg;
        else return 1;
    }
    pthread_t th[3];
    void *addr = NULL;
    if (!strcmp(mode, "rwlock") || !strcmp(mode, "pi")) {
        if (*mode == 'p') {
            pthread_mutexattr_t a;
            pthread_mutexattr_init(&a);
            pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
            pthread_mutex_init(&pi_lock, &a);
        }
        addr = *mode == 'r' ? (void *)&rw_lock : (void *)&pi_lock;
        pthread_create(&th[0], NULL, holder, (void *)mode);
        pthread_create(&th[1], NULL, *mode == 'r' ? reader : pi_waiter, NULL);
        pthread_join(th[0], NULL);
        pthread_join(th[1], NULL);
    } else if (!strcmp(mode, "sem")) {
        sem_init(&sem_items, 0, 0);
        addr = &sem_items;
        pthread_create(&th[0], NULL, poster, NULL);
        for (int r = 0; r < rounds; r++) {
            uint64_t t0 = now_ns();
            if (sem_trywait(&sem_items)) {
                while (sem_wait(&sem_items))
                    ;
                timed(t0);
            }
        }
        pthread_join(th[0], NULL);
    } else if (!strcmp(mode, "join")) {
        for (int r = 0; r < rounds; r++) {
            pthread_create(&th[0], NULL, sleeper, NULL);
            uint64_t t0 = now_ns();
            pthread_join(th[0], NULL);
            timed(t0);
        }
    } else if (!strcmp(mode, "barrier")) {
        pthread_barrier_init(&barrier_point, NULL, 3);
        addr = &barrier_point;
        for (int i = 0; i < 3; i++)
            pthread_create(&th[i], NULL, meeter, (void *)(intptr_t)i);
        for (int i = 0; i < 3; i++)
            pthread_join(th[i], NULL);
    } else if (!strcmp(mode, "waitv")) {
        addr = waitv_words;
        waitv_rounds();
    } else if (!strcmp(mode, "file") && path) {
        addr = file_word(path);
    } else {
        fprintf(stderr, "usage: native_waits rwlock|sem|join|barrier|pi|waitv|file [-n ROUNDS] [-f FILE]\n");
        return 1;
    }
    printf("{\"pid\":%d,\"mode\":\"%s\",\"addr\":\"%p\",\"calls\":%llu,\"wait_ns\":%llu,\"unsupported\":%s}\n",
           getpid(), mode, addr, (unsigned long long)calls, (unsigned long long)wait_ns,
           unsupported ? "true" : "false");
    return 0;
}
