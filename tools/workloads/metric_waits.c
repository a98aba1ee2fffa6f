/* Waits whose figures the workload fixes and measures itself, so that
 * parktrace's per-blocker metrics can be checked against them
 * (tests/integration/test_metrics.py).
 *
 * MODE is one of:
 *   util   a holder keeps util_lock ROUNDS times for 100 ms, 100 ms apart;
 *          three waiters try to take it during each hold. Every waiter's lock
 *          call is timed: "waits" lists their [start, end] (CLOCK_MONOTONIC).
 *   stuck  a thread waits on stuck_word (FUTEX_WAIT, no timeout) until main
 *          wakes it MS milliseconds later (default 3000); the wait's start and
 *          end are given in CLOCK_REALTIME ns (to place it among reports)
 *          and its length in CLOCK_MONOTONIC ns.
 *   hist   8 FUTEX_WAITs on hist_word that time out after 1.5 ms, then 4
 *          after 24 ms; "waits" lists each one's measured length.
 *   peak   3 threads wait on gate_word together and are woken together, then
 *          5: first a "long" waiter alone, 300 ms later 4 more. Before each
 *          wake main checks in /proc that every waiter sleeps in futex(), so
 *          the most waiters at once is exactly 5.
 *
 * usage: metric_waits MODE [-n ROUNDS] [-m MS]
 * prints one JSON line: pid, mode, the futex's address and what was measured. */
#include <errno.h>
#include <limits.h>
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

#define MAX_WAITS 256

pthread_mutex_t util_lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic uint32_t stuck_word, hist_word, gate_word;

static int rounds = 5;
static long stuck_ms = 3000;
static _Atomic int round_no = -1;   /* util: the round whose hold has begun */
static uint64_t waits[MAX_WAITS][2];
static _Atomic int nwaits;

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static void record(uint64_t t0, uint64_t t1)
{
    int i = nwaits++;
    if (i < MAX_WAITS) {
        waits[i][0] = t0;
        waits[i][1] = t1;
    }
}

static void print_waits(FILE *f, int pairs)
{
    fputs("\"waits\":[", f);
    for (int i = 0; i < nwaits && i < MAX_WAITS; i++) {
        if (pairs)
            fprintf(f, "%s[%llu,%llu]", i ? "," : "", (unsigned long long)waits[i][0],
                    (unsigned long long)waits[i][1]);
        else
            fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)(waits[i][1] - waits[i][0]));
    }
    fputs("]", f);
}

/* ---- util ---- */

static void *util_waiter(void *arg)
{
    (void)arg;
    for (int r = 0; r < rounds; r++) {
        while (round_no < r)
            sleep_us(500);
        uint64_t t0 = now_ns();
        pthread_mutex_lock(&util_lock);
        record(t0, now_ns());
        pthread_mutex_unlock(&util_lock);
    }
    return NULL;
}

static int run_util(void)
{
    pthread_t th[3];
    uint64_t held_ns = 0;
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, util_waiter, NULL);
    for (int r = 0; r < rounds; r++) {
        pthread_mutex_lock(&util_lock);
        uint64_t t0 = now_ns();
        round_no = r;
        sleep_us(100000);
        held_ns += now_ns() - t0;
        pthread_mutex_unlock(&util_lock);
        sleep_us(100000);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    printf("{\"pid\":%d,\"mode\":\"util\",\"addr\":\"%p\",\"held_ns\":%llu,", getpid(), (void *)&util_lock,
           (unsigned long long)held_ns);
    print_waits(stdout, 1);
    puts("}");
    return 0;
}

/* ---- stuck ---- */

static uint64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t stuck_real[2], stuck_mono_ns;
static int stuck_calls;

static void *stuck_waiter(void *arg)
{
    (void)arg;
    uint64_t r0 = real_ns(), t0 = now_ns();
    while (stuck_word == 0) {
        stuck_calls++;
        futex(&stuck_word, FUTEX_WAIT_PRIVATE, 0, NULL);
    }
    stuck_mono_ns = now_ns() - t0;
    stuck_real[1] = real_ns();
    stuck_real[0] = r0;
    return NULL;
}

static int run_stuck(void)
{
    pthread_t th;
    pthread_create(&th, NULL, stuck_waiter, NULL);
    sleep_us(stuck_ms * 1000);
    stuck_word = 1;
    futex(&stuck_word, FUTEX_WAKE_PRIVATE, 1, NULL);
    pthread_join(th, NULL);
    printf("{\"pid\":%d,\"mode\":\"stuck\",\"addr\":\"%p\",\"calls\":%d,\"start_real_ns\":%llu,"
           "\"end_real_ns\":%llu,\"wait_ns\":%llu}\n",
           getpid(), (void *)&stuck_word, stuck_calls, (unsigned long long)stuck_real[0],
           (unsigned long long)stuck_real[1], (unsigned long long)stuck_mono_ns);
    return 0;
}

/* ---- hist ---- */

static int run_hist(void)
{
    static const struct { int n; long ns; } sets[] = {{8, 1500000}, {4, 24000000}};
    int timed_out = 0;
    for (unsigned s = 0; s < sizeof sets / sizeof sets[0]; s++)
        for (int i = 0; i < sets[s].n; i++) {
            struct timespec ts = {0, sets[s].ns};
            uint64_t t0 = now_ns();
            long rc = futex(&hist_word, FUTEX_WAIT_PRIVATE, 0, &ts);
            record(t0, now_ns());
            timed_out += rc == -1 && errno == ETIMEDOUT;
        }
    printf("{\"pid\":%d,\"mode\":\"hist\",\"addr\":\"%p\",\"timed_out\":%d,", getpid(), (void *)&hist_word,
           timed_out);
    print_waits(stdout, 0);
    puts("}");
    return 0;
}

/* ---- peak ---- */

static _Atomic pid_t tids[8];   /* 0 until the thread has stored its id */
static _Atomic int ntids;

static void *gate_waiter(void *arg)
{
    uint32_t gen = (uint32_t)(uintptr_t)arg;
    tids[ntids++] = (pid_t)syscall(SYS_gettid);
    uint64_t t0 = now_ns();
    while (gate_word == gen)
        futex(&gate_word, FUTEX_WAIT_PRIVATE, gen, NULL);
    record(t0, now_ns());
    return NULL;
}

/* Thread TID sleeps (state S) in futex() (syscall 202 on x86-64). */
static int sleeps_in_futex(pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *s = strrchr(buf, ')');
    if (!s || s[1] != ' ' || s[2] != 'S')
        return 0;
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    int nr = -1;
    if (fscanf(f, "%d", &nr) != 1)
        nr = -1;
    fclose(f);
    return nr == SYS_futex;
}

/* Waits until threads FROM..TO-1 all sleep in futex() at one time. */
static void await_sleepers(int from, int to)
{
    for (;;) {
        sleep_us(2000);
        if (ntids < to)
            continue;
        int all = 1;
        for (int i = from; i < to && all; i++)
            all = sleeps_in_futex(tids[i]);
        if (all)
            return;
    }
}

static void open_gate(void)
{
    gate_word++;
    futex(&gate_word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

static int run_peak(void)
{
    pthread_t th[8];
    /* Round 1: three at once. */
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, gate_waiter, (void *)(uintptr_t)0);
    await_sleepers(0, 3);
    open_gate();
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    /* Round 2: the long waiter first, then four more. */
    pthread_create(&th[3], NULL, gate_waiter, (void *)(uintptr_t)1);
    await_sleepers(3, 4);
    sleep_us(300000);
    for (int i = 4; i < 8; i++)
        pthread_create(&th[i], NULL, gate_waiter, (void *)(uintptr_t)1);
    await_sleepers(3, 8);
    open_gate();
    for (int i = 3; i < 8; i++)
        pthread_join(th[i], NULL);
    printf("{\"pid\":%d,\"mode\":\"peak\",\"addr\":\"%p\",\"peak\":5,\"threads\":8,", getpid(),
           (void *)&gate_word);
    print_waits(stdout, 0);
    puts("}");
    return 0;
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "n:m:")) != -1) {
        if (c == 'n') rounds = atoi(optarg);
        else if (c == 'm') stuck_ms = atol(optarg);
        else return 1;
    }
    const char *mode = optind < argc ? argv[optind] : "";
    if (rounds < 1 || rounds > MAX_WAITS / 2 || stuck_ms < 1) {
        fprintf(stderr, "metric_waits: bad arguments\n");
        return 1;
    }
    if (!strcmp(mode, "util")) return run_util();
    if (!strcmp(mode, "stuck")) return run_stuck();
    if (!strcmp(mode, "hist")) return run_hist();
    if (!strcmp(mode, "peak")) return run_peak();
    fprintf(stderr, "usage: metric_waits util|stuck|hist|peak [-n ROUNDS] [-m MS]\n");
    return 1;
}
