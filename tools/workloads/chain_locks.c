/* Wait chains that the workload knows: a thread waits on a lock whose
 * holder is itself waiting, and the wait's time is lost at the end of that
 * chain (docs/metrics.md, "Wait chains").
 *
 * Modes (-m), each for ROUNDS rounds of HOLD_MS:
 *   sleep     worker -[A]-> flusher -[B]-> writer, which holds B in a
 *             timed sleep (end: sleeping)
 *   io        the same, the writer holding B through write + fsync of a
 *             file in DIR (end: io, task state D)
 *   deadlock  locker1 holds A and waits on B, locker2 holds B and waits
 *             on A, both with a timeout of HOLD_MS (a cycle)
 *   cross     client (this process) -[M]-> holder (a child process, M a
 *             process-shared mutex) -[B]-> sleeper (the child's other
 *             thread, sleeping)
 *   cond      consumer -[a condition variable]-> producer, which signals
 *             it once it has B -[B]-> writer (sleeping): a condition
 *             records no owner, so the thread that woke the consumer last
 *             stands in; the first four rounds are not counted (glibc's
 *             condition variable sleeps on two futex words in turn: each
 *             has its waker once it has woken the consumer there twice)
 *   turns     as cond, but two producers (producer1, producer2) take
 *             turns at it, two rounds each, so that on each of the
 *             condition's futex words the consumer's wakers alternate:
 *             the last waker is no stand-in for who will signal next
 *   handoff   worker and flusher wait on A, held by keeper; keeper lets go,
 *             A passes to the flusher, who waits on B -[B]-> writer
 *             (sleeping): the worker's chain changes hands with A; chain_ns
 *             is the part of its wait after the hand-off
 * Each waiting call starts only once the link it waits behind is asleep
 * (its /proc state), so the whole chain stands while it waits.
 *
 * usage: chain_locks -m MODE [-n ROUNDS] [-h HOLD_MS] [-d DIR] [-r REPORT.json]
 * The report: {"mode":"...","waits":N,"wait_ns":NS,"chain_ns":NS,"pid":N,
 * "tids":{"worker":N,...}}: waits and wait_ns are the first link's timed
 * lock() calls; chain_ns the part of them during which the whole chain
 * stood (the last holder had not yet let go), summed over the waiting
 * threads: for a deadlock, both lockers' time while both waited. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload_time.h"

static int rounds = 20;
static long hold_ms = 50;
static const char *dir = "/var/tmp";
/* -m cond and turns: rounds not counted, until a thread has woken the
 * consumer twice on each of the condition's two futex words. */
#define COND_WARMUP 4

/* What every thread (and, for -m cross, both processes) shares. */
struct shared {
    pthread_mutex_t a, b, m;
    pthread_cond_t cv;                 /* -m cond: the consumer's */
    int signaled;                      /* -m cond: the rounds signalled, under a */
    bool turns;                        /* -m turns: two producers take turns */
    _Atomic int round;              /* deadlock: the round the lockers may start */
    _Atomic int first_waiting;      /* the round whose first link waits now */
    _Atomic int first_done;         /* the rounds the first link has finished */
    _Atomic int tids[4];            /* the chain's threads, first link first */
    _Atomic int holder_ready;       /* the round whose last holder holds its lock */
    _Atomic int middle_ready;       /* the round whose middle link holds A (or M) and waits */
    _Atomic int done[2];            /* deadlock: rounds each locker has finished */
    _Atomic uint64_t released_ns;   /* when the chain's last holder let go */
    _Atomic uint64_t handed_ns;     /* -m handoff: when the keeper let A go */
    _Atomic int kept;               /* -m handoff: the round whose keeper holds A */
    uint64_t waits, wait_ns, chain_ns;
    uint64_t start_ns[2], end_ns[2];   /* deadlock: each locker's wait this round */
};
static struct shared *sh;

static int gettid_(void)
{
    return (int)syscall(SYS_gettid);
}

/* Until thread TID of process PID sleeps (state S or D), up to 2 s. */
static void wait_asleep(int pid, int tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
    for (int i = 0; i < 20000; i++) {
        if (read_proc_file(path, buf, sizeof(buf)) > 0) {
            char *p = strrchr(buf, ')');
            if (p && (p[2] == 'S' || p[2] == 'D'))
                return;
        }
        sleep_us(100);
    }
}

static void until_round(_Atomic int *v, int r)
{
    while (atomic_load(v) < r)
        sleep_us(100);
}

/* The last holder's hold: a timed sleep, or write + fsync until HOLD_MS. */
static void hold_last(int io_fd)
{
    if (io_fd < 0) {
        sleep_us(hold_ms * 1000);
        return;
    }
    /* 256 KiB a fsync: each a disk write of its own, not thousands of
     * short ones (each a switch that re-reads the chains through it). */
    static char block[256 << 10];
    uint64_t until = now_ns() + (uint64_t)hold_ms * 1000000;
    do {
        if (pwrite(io_fd, block, sizeof(block), 0) < 0 || fsync(io_fd) < 0) {
            perror("chain_locks: write");
            exit(1);
        }
    } while (now_ns() < until);
}

static int io_fd = -1;

/* The chain's last link: NAME holds B through hold_last each round, from
 * FIRST to LAST (the writer, or -m cross's sleeper). */
struct last_link {
    const char *name;
    int first, last;
};

static void *run_last_link(void *arg)
{
    const struct last_link *l = arg;
    pthread_setname_np(pthread_self(), l->name);
    atomic_store(&sh->tids[2], gettid_());
    for (int r = l->first; r <= l->last; r++) {
        pthread_mutex_lock(&sh->b);
        atomic_store(&sh->holder_ready, r);     /* the middle link may wait on B */
        until_round(&sh->first_waiting, r);     /* the first link waits now */
        hold_last(io_fd);
        atomic_store(&sh->released_ns, now_ns());
        pthread_mutex_unlock(&sh->b);
        until_round(&sh->first_done, r);
    }
    return NULL;
}

/* The middle link: holds A while it waits on B behind the writer. ARG
 * nonzero (-m handoff): queues on A first, behind the keeper, and holds A
 * once the keeper hands it over. */
static void *flusher(void *arg)
{
    bool handoff = arg != NULL;
    pthread_setname_np(pthread_self(), "flusher");
    atomic_store(&sh->tids[1], gettid_());
    for (int r = 1; r <= rounds; r++) {
        until_round(handoff ? &sh->kept : &sh->holder_ready, r);
        if (handoff)
            atomic_store(&sh->middle_ready, r); /* its next sleep: A's */
        pthread_mutex_lock(&sh->a);
        if (!handoff)
            atomic_store(&sh->middle_ready, r); /* its next sleep: B's */
        pthread_mutex_lock(&sh->b);             /* behind the writer */
        pthread_mutex_unlock(&sh->b);
        pthread_mutex_unlock(&sh->a);
        until_round(&sh->first_done, r);
    }
    return NULL;
}

/* The first link: one timed lock() of A (or M) a round, once the chain
 * behind it stands (its holder, in process PID, asleep). HANDOFF: the
 * whole chain stands only from the keeper's hand-off on. */
static void first_link(pthread_mutex_t *m, int pid, int r, bool handoff)
{
    until_round(&sh->middle_ready, r);
    wait_asleep(pid, atomic_load(&sh->tids[1]));
    uint64_t t0 = now_ns();
    atomic_store(&sh->first_waiting, r);
    pthread_mutex_lock(m);
    uint64_t t1 = now_ns(), released = atomic_load(&sh->released_ns);
    uint64_t from = handoff ? atomic_load(&sh->handed_ns) : t0;
    pthread_mutex_unlock(m);
    atomic_store(&sh->first_done, r);
    sh->waits++;
    sh->wait_ns += t1 - t0;
    if (released > t0 && released <= t1 && released > from)
        sh->chain_ns += released - from;
}

/* -m handoff: holds A until both the flusher and the worker sleep on it
 * (the flusher first, so that A passes to it), then lets it go. */
static void *keeper(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "keeper");
    atomic_store(&sh->tids[3], gettid_());
    for (int r = 1; r <= rounds; r++) {
        until_round(&sh->holder_ready, r);
        pthread_mutex_lock(&sh->a);
        atomic_store(&sh->kept, r);
        until_round(&sh->first_waiting, r);
        wait_asleep(getpid(), atomic_load(&sh->tids[0]));
        sleep_us(hold_ms * 250);     /* a quarter of the hold with the keeper as holder */
        atomic_store(&sh->handed_ns, now_ns());
        pthread_mutex_unlock(&sh->a);
        until_round(&sh->first_done, r);
    }
    return NULL;
}

/* -m handoff: the worker's timed lock() of A, behind the keeper and the
 * flusher; the chain after the hand-off is what the test checks. */
static void run_handoff(void)
{
    pthread_t tw, tf, tk;
    struct last_link w = {"writer", 1, rounds};
    pthread_create(&tw, NULL, run_last_link, &w);
    pthread_create(&tk, NULL, keeper, NULL);
    pthread_create(&tf, NULL, flusher, (void *)1);
    pthread_setname_np(pthread_self(), "worker");
    atomic_store(&sh->tids[0], gettid_());
    while (!atomic_load(&sh->tids[1]) || !atomic_load(&sh->tids[3]))
        sleep_us(100);
    for (int r = 1; r <= rounds; r++)
        first_link(&sh->a, getpid(), r, true);
    pthread_join(tw, NULL);
    pthread_join(tk, NULL);
    pthread_join(tf, NULL);
}

static void run_chain(void)
{
    pthread_t tw, tf;
    struct last_link w = {"writer", 1, rounds};
    pthread_create(&tw, NULL, run_last_link, &w);
    pthread_create(&tf, NULL, flusher, NULL);
    pthread_setname_np(pthread_self(), "worker");
    atomic_store(&sh->tids[0], gettid_());
    while (!atomic_load(&sh->tids[1]))
        sleep_us(100);
    for (int r = 1; r <= rounds; r++)
        first_link(&sh->a, getpid(), r, false);
    pthread_join(tw, NULL);
    pthread_join(tf, NULL);
}

/* -m turns: which producer (0 or 1) signals round R: two rounds each,
 * while the condition's futex words alternate every round. */
static int turn(int r)
{
    return ((r + 1) / 2) % 2;
}

/* -m cond: each round, takes B behind the writer, then signals the
 * consumer; -m turns: only in its own rounds (ARG: which of the two). */
static void *producer(void *arg)
{
    int me = (int)(intptr_t)arg;
    bool turns = me >= 0;
    pthread_setname_np(pthread_self(), !turns ? "producer" : me ? "producer2" : "producer1");
    atomic_store(&sh->tids[turns && me ? 3 : 1], gettid_());
    for (int r = 0; r < rounds + COND_WARMUP; r++) {
        if (turns && turn(r) != me) {
            until_round(&sh->first_done, r);
            continue;
        }
        until_round(&sh->holder_ready, r);
        atomic_store(&sh->middle_ready, r);     /* its next sleep: B's */
        pthread_mutex_lock(&sh->b);
        pthread_mutex_unlock(&sh->b);
        pthread_mutex_lock(&sh->a);
        sh->signaled = r;
        pthread_cond_signal(&sh->cv);
        pthread_mutex_unlock(&sh->a);
        until_round(&sh->first_done, r);
    }
    return NULL;
}

/* -m cond: the consumer waits on the condition until round R is
 * signalled, once the producer waits behind the writer. The first
 * COND_WARMUP rounds are not counted. */
static void consume(int r)
{
    until_round(&sh->middle_ready, r);
    wait_asleep(getpid(), atomic_load(&sh->tids[sh->turns && turn(r) ? 3 : 1]));
    uint64_t t0 = now_ns();
    atomic_store(&sh->first_waiting, r);
    pthread_mutex_lock(&sh->a);
    while (sh->signaled < r)
        pthread_cond_wait(&sh->cv, &sh->a);
    pthread_mutex_unlock(&sh->a);
    uint64_t t1 = now_ns(), released = atomic_load(&sh->released_ns);
    atomic_store(&sh->first_done, r);
    if (r < COND_WARMUP)
        return;
    sh->waits++;
    sh->wait_ns += t1 - t0;
    if (released > t0 && released <= t1)
        sh->chain_ns += released - t0;
}

static void run_cond(bool turns)
{
    pthread_t tw, tp, tp2;
    sh->signaled = -1;
    atomic_store(&sh->holder_ready, -1);
    atomic_store(&sh->middle_ready, -1);
    atomic_store(&sh->first_waiting, -1);
    atomic_store(&sh->first_done, -1);
    struct last_link w = {"writer", 0, rounds + COND_WARMUP - 1};    /* the warm-up uncounted */
    pthread_create(&tw, NULL, run_last_link, &w);
    sh->turns = turns;
    pthread_create(&tp, NULL, producer, (void *)(intptr_t)(turns ? 0 : -1));
    if (turns)
        pthread_create(&tp2, NULL, producer, (void *)(intptr_t)1);
    pthread_setname_np(pthread_self(), "consumer");
    atomic_store(&sh->tids[0], gettid_());
    while (!atomic_load(&sh->tids[1]) || (turns && !atomic_load(&sh->tids[3])))
        sleep_us(100);
    for (int r = 0; r < rounds + COND_WARMUP; r++)
        consume(r);
    pthread_join(tw, NULL);
    pthread_join(tp, NULL);
    if (turns)
        pthread_join(tp2, NULL);
}

/* -m deadlock: locker I holds its own lock and waits, with a timeout, on
 * the other's, once the other holds its own. */
static void *locker(void *arg)
{
    int i = (int)(intptr_t)arg;
    pthread_mutex_t *mine = i ? &sh->b : &sh->a, *other = i ? &sh->a : &sh->b;
    pthread_setname_np(pthread_self(), i ? "locker2" : "locker1");
    atomic_store(&sh->tids[i], gettid_());
    for (int r = 1; r <= rounds; r++) {
        until_round(&sh->round, r);
        pthread_mutex_lock(mine);
        atomic_fetch_add(&sh->holder_ready, 1);
        while (atomic_load(&sh->holder_ready) < 2 * r)
            sleep_us(100);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += hold_ms / 1000;
        until.tv_nsec += (hold_ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        sh->start_ns[i] = now_ns();
        int err = pthread_mutex_timedlock(other, &until);
        sh->end_ns[i] = now_ns();
        if (!err)
            pthread_mutex_unlock(other);
        pthread_mutex_unlock(mine);
        atomic_store(&sh->done[i], r);
        while (atomic_load(&sh->done[1 - i]) < r)
            sleep_us(100);
    }
    return NULL;
}

static void run_deadlock(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, locker, (void *)(intptr_t)i);
    for (int r = 1; r <= rounds; r++) {
        atomic_store(&sh->round, r);
        while (atomic_load(&sh->done[0]) < r || atomic_load(&sh->done[1]) < r)
            sleep_us(100);
        /* Both waited: the cycle stood from the later start to the earlier end. */
        uint64_t from = sh->start_ns[0] > sh->start_ns[1] ? sh->start_ns[0] : sh->start_ns[1];
        uint64_t to = sh->end_ns[0] < sh->end_ns[1] ? sh->end_ns[0] : sh->end_ns[1];
        for (int i = 0; i < 2; i++) {
            sh->waits++;
            sh->wait_ns += sh->end_ns[i] - sh->start_ns[i];
        }
        if (to > from)
            sh->chain_ns += 2 * (to - from);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

/* -m cross, in the child: the holder takes M and waits on B behind the
 * sleeper, which holds B asleep for HOLD_MS (no -d file: io_fd -1). */
static void cross_child(void)
{
    pthread_t ts;
    struct last_link s = {"sleeper", 1, rounds};
    pthread_setname_np(pthread_self(), "holder");
    atomic_store(&sh->tids[1], gettid_());
    pthread_create(&ts, NULL, run_last_link, &s);
    for (int r = 1; r <= rounds; r++) {
        until_round(&sh->holder_ready, r);
        pthread_mutex_lock(&sh->m);
        atomic_store(&sh->middle_ready, r);
        pthread_mutex_lock(&sh->b);
        pthread_mutex_unlock(&sh->b);
        pthread_mutex_unlock(&sh->m);
        until_round(&sh->first_done, r);
    }
    pthread_join(ts, NULL);
}

static int run_cross(void)
{
    pid_t child = fork();
    if (child < 0) {
        perror("chain_locks: fork");
        return 1;
    }
    if (!child) {
        cross_child();
        _exit(0);
    }
    pthread_setname_np(pthread_self(), "client");
    atomic_store(&sh->tids[0], gettid_());
    while (!atomic_load(&sh->tids[1]))
        sleep_us(100);
    for (int r = 1; r <= rounds; r++)
        first_link(&sh->m, child, r, false);
    int status;
    return waitpid(child, &status, 0) == child && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *mode = NULL, *report = NULL;
    int c;
    while ((c = getopt(argc, argv, "m:n:h:d:r:")) != -1) {
        switch (c) {
        case 'm': mode = optarg; break;
        case 'n': rounds = atoi(optarg); break;
        case 'h': hold_ms = atol(optarg); break;
        case 'd': dir = optarg; break;
        case 'r': report = optarg; break;
        default: mode = NULL; rounds = 0; break;
        }
    }
    bool known = mode && (!strcmp(mode, "sleep") || !strcmp(mode, "io") || !strcmp(mode, "deadlock") ||
                          !strcmp(mode, "cross") || !strcmp(mode, "cond") || !strcmp(mode, "turns") ||
                          !strcmp(mode, "handoff"));
    if (!known || rounds < 1 || rounds > 100000 || hold_ms < 1 || hold_ms > 60000) {
        fprintf(stderr, "usage: %s -m sleep|io|deadlock|cross|cond|turns|handoff [-n ROUNDS] [-h HOLD_MS] [-d DIR] [-r REPORT]\n",
                argv[0]);
        return 1;
    }
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("chain_locks: mmap");
        return 1;
    }
    pthread_mutexattr_t shared;
    pthread_mutexattr_init(&shared);
    pthread_mutexattr_setpshared(&shared, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&sh->a, NULL);
    pthread_mutex_init(&sh->b, &shared);
    pthread_mutex_init(&sh->m, &shared);
    pthread_cond_init(&sh->cv, NULL);
    int rc = 0;
    if (!strcmp(mode, "io")) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/chain_locks.XXXXXX", dir);
        io_fd = mkstemp(path);
        if (io_fd < 0) {
            perror(path);
            return 1;
        }
        unlink(path);
    }
    if (!strcmp(mode, "deadlock"))
        run_deadlock();
    else if (!strcmp(mode, "cross"))
        rc = run_cross();
    else if (!strcmp(mode, "handoff"))
        run_handoff();
    else if (!strcmp(mode, "cond") || !strcmp(mode, "turns"))
        run_cond(!strcmp(mode, "turns"));
    else
        run_chain();

    FILE *f = report ? fopen(report, "w") : stdout;
    if (!f) {
        perror(report);
        return 1;
    }
    fprintf(f, "{\"mode\":\"%s\",\"waits\":%llu,\"wait_ns\":%llu,\"chain_ns\":%llu,\"pid\":%d,\"hold_ms\":%ld}\n",
            mode, (unsigned long long)sh->waits, (unsigned long long)sh->wait_ns,
            (unsigned long long)sh->chain_ns, (int)getpid(), hold_ms);
    if (f != stdout && fclose(f)) {
        perror(report);
        return 1;
    }
    return rc;
}
