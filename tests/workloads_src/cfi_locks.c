/* Two call paths into one mutex, for checking that waiter stacks keep them
 * apart. Built by tests/integration/test_stacks.py with and without frame
 * pointers (so it is not under tools/workloads, which the Makefile builds
 * with them).
 *
 * ingest_thread() -> ingest_record() and flush_thread() -> flush_batch()
 * lock the same global mutex, shared_lock, holding it ~1 ms and ~2 ms with a
 * think time between acquisitions (so a woken waiter rarely loses its race:
 * one blocked lock call = one futex wait). batch_thread() -> await_batch()
 * waits on a condition variable that notify_thread() signals every 5 ms.
 *
 * usage: cfi_locks [-t THREADS>=2] [-s SECONDS] [-r REPORT.json] [-w DELAY_MS] [-m]
 * -m (mixed): every thread takes both paths in turn, each through 0 to 2
 * extra frames (via), so that a thread's stack changes from one wait to the
 * next among six (more than a thread's stack cache holds).
 * DELAY_MS holds the threads back at first: main makes one 1 ms futex wait
 * that times out (a tracer that builds a process's unwind tables at its
 * first wait starts on them then) and sleeps, so that the tables are in
 * place before the threads' first wait.
 * The report holds, per locking function, its lock calls and how many of
 * them blocked (trylock failed first, then lock), and the condition waits. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../tools/workloads/workload_time.h"

/* Kept out of line and uncloned, so each has its own symbol and frame. */
#define FRAME __attribute__((noinline, noclone))
/* After a call: keeps it from being a tail call, whose frame would vanish. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t batch_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t batch_ready = PTHREAD_COND_INITIALIZER;

struct path_stats {
    _Atomic uint64_t calls, blocked, blocked_ns;
};

struct path_stats ingest_stats, flush_stats;
_Atomic uint64_t cond_waits, cond_wait_ns;
static _Atomic int stop;
static int mixed;      /* -m */
static int pending;    /* batches signalled and not yet taken, under batch_lock */

/* Takes shared_lock, counting the calls that had to wait for it. Each
 * locking function has its own copy of this so that pthread_mutex_lock is
 * called straight from it. */
#define LOCK_COUNTED(stats)                                 \
    do {                                                    \
        (stats)->calls++;                                   \
        if (pthread_mutex_trylock(&shared_lock) != 0) {     \
            uint64_t t0 = now_ns();                         \
            pthread_mutex_lock(&shared_lock);               \
            KEEP_FRAME();                                   \
            (stats)->blocked_ns += now_ns() - t0;           \
            (stats)->blocked++;                             \
        }                                                   \
    } while (0)

FRAME void ingest_record(unsigned id)
{
    LOCK_COUNTED(&ingest_stats);
    sleep_us(1000);
    pthread_mutex_unlock(&shared_lock);
    (void)id;
    KEEP_FRAME();
}

FRAME void flush_batch(unsigned id)
{
    LOCK_COUNTED(&flush_stats);
    sleep_us(2000);
    pthread_mutex_unlock(&shared_lock);
    (void)id;
    KEEP_FRAME();
}

/* batch_lock is taken by spinning on trylock, so the only futex waits on a
 * mutex are the two counted paths into shared_lock (and, rarely,
 * pthread_cond_wait's re-lock of batch_lock). */
static void spin_lock(pthread_mutex_t *m)
{
    while (pthread_mutex_trylock(m) != 0)
        sched_yield();
}

/* Waits for notify_thread's next batch; returns 0 once the run is over. */
FRAME int await_batch(void)
{
    int more;
    spin_lock(&batch_lock);
    while (pending == 0 && !stop) {
        uint64_t t0 = now_ns();
        pthread_cond_wait(&batch_ready, &batch_lock);
        KEEP_FRAME();
        cond_wait_ns += now_ns() - t0;
        cond_waits++;
    }
    more = pending > 0 || !stop;
    pending = 0;
    pthread_mutex_unlock(&batch_lock);
    KEEP_FRAME();
    return more;
}

/* PATH(ID) through DEPTH more frames of its own. */
FRAME void via(unsigned depth, void (*path)(unsigned), unsigned id)
{
    if (depth)
        via(depth - 1, path, id);
    else
        path(id);
    KEEP_FRAME();
}

FRAME void *ingest_thread(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; !stop; i++) {
        if (mixed)
            via(i / 2 % 3, i % 2 ? flush_batch : ingest_record, id);
        else
            ingest_record(id);
        sleep_us(500 + 150 * (long)id);
    }
    KEEP_FRAME();
    return NULL;
}

FRAME void *flush_thread(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; !stop; i++) {
        if (mixed)
            via(i / 2 % 3, i % 2 ? ingest_record : flush_batch, id);
        else
            flush_batch(id);
        sleep_us(1000 + 150 * (long)id);
    }
    KEEP_FRAME();
    return NULL;
}

FRAME void *batch_thread(void *arg)
{
    (void)arg;
    while (await_batch())
        KEEP_FRAME();
    return NULL;
}

/* Signals after unlocking, so the woken waiter's re-lock of batch_lock does
 * not find it held. */
FRAME void *notify_thread(void *arg)
{
    (void)arg;
    while (!stop) {
        sleep_us(5000);
        spin_lock(&batch_lock);
        pending++;
        pthread_mutex_unlock(&batch_lock);
        pthread_cond_signal(&batch_ready);
    }
    spin_lock(&batch_lock);
    pthread_cond_broadcast(&batch_ready);
    pthread_mutex_unlock(&batch_lock);
    KEEP_FRAME();
    return NULL;
}

static void put_path(FILE *f, const char *fn, const char *thread, int threads, const struct path_stats *s)
{
    fprintf(f, "{\"function\":\"%s\",\"thread\":\"%s\",\"threads\":%d,\"calls\":%llu,"
               "\"blocked\":%llu,\"blocked_ns\":%llu}",
            fn, thread, threads, (unsigned long long)s->calls, (unsigned long long)s->blocked,
            (unsigned long long)s->blocked_ns);
}

int main(int argc, char **argv)
{
    const char *report = NULL;
    double seconds = 3;
    int nthreads = 6, delay_ms = 0, c;
    while ((c = getopt(argc, argv, "t:s:r:w:m")) != -1) {
        switch (c) {
        case 't': nthreads = atoi(optarg); break;
        case 's': seconds = atof(optarg); break;
        case 'r': report = optarg; break;
        case 'w': delay_ms = atoi(optarg); break;
        case 'm': mixed = 1; break;
        default:
            fprintf(stderr, "usage: %s [-t THREADS] [-s SECONDS] [-r REPORT] [-w DELAY_MS] [-m]\n", argv[0]);
            return 1;
        }
    }
    if (nthreads < 2 || nthreads > 64 || seconds <= 0) {
        fprintf(stderr, "cfi_locks: bad arguments (2 <= THREADS <= 64, SECONDS > 0)\n");
        return 1;
    }
    if (delay_ms > 0) {
        static uint32_t never_woken;
        struct timespec ms = {0, 1000000};
        syscall(SYS_futex, &never_woken, FUTEX_WAIT_PRIVATE, 0, &ms, NULL, 0);
        sleep_us(1000L * delay_ms);
    }
    int ningest = nthreads / 2, nflush = nthreads - ningest;
    pthread_t th[66];
    int n = 0;
    for (int i = 0; i < ningest; i++)
        pthread_create(&th[n++], NULL, ingest_thread, (void *)(uintptr_t)i);
    for (int i = 0; i < nflush; i++)
        pthread_create(&th[n++], NULL, flush_thread, (void *)(uintptr_t)i);
    pthread_create(&th[n++], NULL, batch_thread, NULL);
    pthread_create(&th[n++], NULL, notify_thread, NULL);
    sleep_us((long)(seconds * 1e6));
    stop = 1;   /* notify_thread's last broadcast wakes batch_thread */
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);

    FILE *f = report ? fopen(report, "w") : stdout;
    if (!f) {
        perror(report);
        return 1;
    }
    fprintf(f, "{\"pid\":%d,\"threads\":%d,\"mutex\":{\"name\":\"shared_lock\",\"addr\":\"%p\"},\"locks\":[",
            getpid(), nthreads, (void *)&shared_lock);
    put_path(f, "ingest_record", "ingest_thread", ningest, &ingest_stats);
    fputc(',', f);
    put_path(f, "flush_batch", "flush_thread", nflush, &flush_stats);
    fprintf(f, "],\"cond\":{\"name\":\"batch_ready\",\"addr\":\"%p\",\"function\":\"await_batch\","
               "\"thread\":\"batch_thread\",\"waits\":%llu,\"wait_ns\":%llu}}\n",
            (void *)&batch_ready, (unsigned long long)cond_waits, (unsigned long long)cond_wait_ns);
    if (f != stdout && fclose(f)) {
        perror(report);
        return 1;
    }
    return 0;
}
