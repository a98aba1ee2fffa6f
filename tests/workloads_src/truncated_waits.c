/* Mutex waits whose stacks the kernel walk must cut short, and controls it
 * must walk whole, for tests/integration/test_stacks.py (compiled there
 * with CFI and without frame pointers, like Debian's packages).
 *
 * Each scenario has its own mutex and thread function. A round: main locks
 * the mutex, starts a new thread (so no thread's stack cache carries one
 * walk into the next), holds the mutex HOLD_US and joins the thread, which
 * times its blocked lock call. Scenarios, in order:
 *   plugin_early  through plugin_lock in a library loaded with dlopen after
 *                 the process's first waits: no table yet, rbp no frame
 *                 pointer (trunc_plugin.c): truncated. One round only: its
 *                 cut-short stack makes parktrace read the mappings again.
 *   plugin_late   the same call after REFRESH_US: whole.
 *   nocfi         through nocfi_hop, assembly with no CFI and no frame
 *                 pointer: truncated.
 *   nocfi_fp      through nocfi_fp_hop, assembly with no CFI that keeps a
 *                 frame pointer: truncated all the same, since only a pc in
 *                 no mapping with a table is stepped by rbp (docs/design/stacks.md,
 *                 "The walk"; README's Limits reads as if any code without
 *                 CFI were).
 *   deep          DEEP calls of deep_recurse, more than the walker's 127
 *                 frames: truncated.
 *   shallow       the same function SHALLOW deep: whole.
 *   signal        in a SIGUSR2 handler the thread raised on itself: the
 *                 signal frame ends the walk, truncated.
 *
 * usage: truncated_waits -l PLUGIN.so [-r REPORT.json]
 * The report lists per scenario the function that calls pthread_mutex_lock,
 * the thread's start function, whether its stack must be truncated, and
 * its blocked lock calls and their time. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/workloads/workload_time.h"

#define FRAME __attribute__((noinline, noclone, used))
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

#define ROUNDS 4
#define HOLD_US 20000
#define SETTLE_US 500000    /* parktrace builds or refreshes a process's tables in a few ms */
#define DEEP 200
#define SHALLOW 20

struct scenario {
    const char *name, *lock_fn, *thread_fn;
    bool truncated;
    int rounds;
    void *(*thread)(void *);
    pthread_mutex_t m;
    uint64_t blocked, blocked_ns;
};

static void (*plugin_lock)(pthread_mutex_t *);

enum { PLUGIN_EARLY, PLUGIN_LATE, NOCFI, NOCFI_FP, DEEP_S, SHALLOW_S, SIGNAL, NSCEN };
static struct scenario scen[NSCEN];

/* Times the lock call ENTER makes on S's mutex, which main holds. */
static void timed_lock(struct scenario *s, void (*enter)(struct scenario *))
{
    if (pthread_mutex_trylock(&s->m) == 0) {
        pthread_mutex_unlock(&s->m);   /* main let go before this thread came */
        return;
    }
    uint64_t t0 = now_ns();
    enter(s);
    s->blocked_ns += now_ns() - t0;
    s->blocked++;
    pthread_mutex_unlock(&s->m);
}

FRAME void nocfi_lock(pthread_mutex_t *m)
{
    pthread_mutex_lock(m);
    KEEP_FRAME();
}

FRAME void nocfi_fp_lock(pthread_mutex_t *m)
{
    pthread_mutex_lock(m);
    KEEP_FRAME();
}

/* Hand-written, so no .cfi directives: no FDE covers them. */
void nocfi_hop(pthread_mutex_t *m);
void nocfi_fp_hop(pthread_mutex_t *m);
__asm__(".text\n"
        ".globl nocfi_hop\n.type nocfi_hop, @function\nnocfi_hop:\n"
        "  sub $8, %rsp\n  call nocfi_lock\n  add $8, %rsp\n  ret\n"
        ".size nocfi_hop, .-nocfi_hop\n"
        ".globl nocfi_fp_hop\n.type nocfi_fp_hop, @function\nnocfi_fp_hop:\n"
        "  push %rbp\n  mov %rsp, %rbp\n  call nocfi_fp_lock\n  pop %rbp\n  ret\n"
        ".size nocfi_fp_hop, .-nocfi_fp_hop\n");

FRAME void deep_lock(pthread_mutex_t *m)
{
    pthread_mutex_lock(m);
    KEEP_FRAME();
}

FRAME void deep_recurse(pthread_mutex_t *m, int depth)
{
    if (depth > 1)
        deep_recurse(m, depth - 1);
    else
        deep_lock(m);
    KEEP_FRAME();
}

FRAME void sig_lock(pthread_mutex_t *m)
{
    pthread_mutex_lock(m);
    KEEP_FRAME();
}

static void enter_plugin(struct scenario *s) { plugin_lock(&s->m); KEEP_FRAME(); }
static void enter_nocfi(struct scenario *s) { nocfi_hop(&s->m); KEEP_FRAME(); }
static void enter_nocfi_fp(struct scenario *s) { nocfi_fp_hop(&s->m); KEEP_FRAME(); }
static void enter_deep(struct scenario *s) { deep_recurse(&s->m, DEEP); }
static void enter_shallow(struct scenario *s) { deep_recurse(&s->m, SHALLOW); }
static void enter_sig(struct scenario *s) { sig_lock(&s->m); KEEP_FRAME(); }

FRAME void *plugin_early_thread(void *a) { timed_lock(a, enter_plugin); KEEP_FRAME(); return NULL; }
FRAME void *plugin_late_thread(void *a) { timed_lock(a, enter_plugin); KEEP_FRAME(); return NULL; }
FRAME void *nocfi_thread(void *a) { timed_lock(a, enter_nocfi); KEEP_FRAME(); return NULL; }
FRAME void *nocfi_fp_thread(void *a) { timed_lock(a, enter_nocfi_fp); KEEP_FRAME(); return NULL; }
FRAME void *deep_thread(void *a) { timed_lock(a, enter_deep); KEEP_FRAME(); return NULL; }
FRAME void *shallow_thread(void *a) { timed_lock(a, enter_shallow); KEEP_FRAME(); return NULL; }

FRAME void sig_handler(int sig)
{
    (void)sig;
    timed_lock(&scen[SIGNAL], enter_sig);
    KEEP_FRAME();
}

FRAME void *signal_thread(void *a)
{
    (void)a;
    pthread_kill(pthread_self(), SIGUSR2);   /* handled before pthread_kill returns */
    KEEP_FRAME();
    return NULL;
}

static void run(struct scenario *s)
{
    for (int i = 0; i < s->rounds; i++) {
        pthread_t t;
        pthread_mutex_lock(&s->m);
        if (pthread_create(&t, NULL, s->thread, s)) {
            perror("pthread_create");
            exit(1);
        }
        sleep_us(HOLD_US);
        pthread_mutex_unlock(&s->m);
        pthread_join(t, NULL);
    }
}

/* The process's first wait: parktrace asks for its tables then. */
static void warm_up(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 5000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&m);
    pthread_cond_timedwait(&c, &m, &ts);
    pthread_mutex_unlock(&m);
}

#define SCEN(i, n, fn, th, tr, r) \
    scen[i] = (struct scenario){n, fn, #th, tr, r, th, PTHREAD_MUTEX_INITIALIZER, 0, 0}

int main(int argc, char **argv)
{
    const char *plugin = NULL, *report = NULL;
    int c;
    while ((c = getopt(argc, argv, "l:r:")) != -1) {
        switch (c) {
        case 'l': plugin = optarg; break;
        case 'r': report = optarg; break;
        default:
            fprintf(stderr, "usage: %s -l PLUGIN.so [-r REPORT]\n", argv[0]);
            return 1;
        }
    }
    if (!plugin) {
        fprintf(stderr, "truncated_waits: -l PLUGIN.so is required\n");
        return 1;
    }
    SCEN(PLUGIN_EARLY, "plugin_early", "plugin_lock", plugin_early_thread, true, 1);
    SCEN(PLUGIN_LATE, "plugin_late", "plugin_lock", plugin_late_thread, false, ROUNDS);
    SCEN(NOCFI, "nocfi", "nocfi_lock", nocfi_thread, true, ROUNDS);
    SCEN(NOCFI_FP, "nocfi_fp", "nocfi_fp_lock", nocfi_fp_thread, true, ROUNDS);
    SCEN(DEEP_S, "deep", "deep_lock", deep_thread, true, ROUNDS);
    SCEN(SHALLOW_S, "shallow", "deep_lock", shallow_thread, false, ROUNDS);
    SCEN(SIGNAL, "signal", "sig_lock", signal_thread, true, ROUNDS);

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = sig_handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &sa, NULL);

    warm_up();
    sleep_us(SETTLE_US);
    void *h = dlopen(plugin, RTLD_NOW);
    if (!h || !(plugin_lock = (void (*)(pthread_mutex_t *))dlsym(h, "plugin_lock"))) {
        fprintf(stderr, "truncated_waits: %s\n", dlerror());
        return 1;
    }
    run(&scen[PLUGIN_EARLY]);
    sleep_us(SETTLE_US);
    for (int i = PLUGIN_LATE; i < NSCEN; i++)
        run(&scen[i]);

    FILE *f = report ? fopen(report, "w") : stdout;
    if (!f) {
        perror(report);
        return 1;
    }
    fprintf(f, "{\"pid\":%d,\"scenarios\":[", getpid());
    for (int i = 0; i < NSCEN; i++) {
        struct scenario *s = &scen[i];
        fprintf(f, "%s{\"name\":\"%s\",\"lock_fn\":\"%s\",\"thread_fn\":\"%s\",\"truncated\":%s,"
                   "\"rounds\":%d,\"blocked\":%llu,\"blocked_ns\":%llu}",
                i ? "," : "", s->name, s->lock_fn, s->thread_fn, s->truncated ? "true" : "false", s->rounds,
                (unsigned long long)s->blocked, (unsigned long long)s->blocked_ns);
    }
    fprintf(f, "]}\n");
    if (f != stdout && fclose(f)) {
        perror(report);
        return 1;
    }
    return 0;
}
