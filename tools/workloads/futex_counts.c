/* Futex words waited on an exact, known number of times, each wait a
 * FUTEX_WAIT that nobody wakes and that ends by its timeout, so that every
 * count and time parktrace reports can be checked exactly.
 *
 * One thread per word: word i is waited on COUNTS[i] times in a row, each
 * wait WAIT_MS long. Before its waits, each thread makes EAGAIN FUTEX_WAIT
 * calls whose expected value does not match the word: the kernel returns
 * EAGAIN at once, and nothing sleeps. The words live in a global array
 * (symbol counted_words), on the heap, or on each thread's stack.
 *
 * usage: futex_counts [-c N1,N2,...] [-w WAIT_MS] [-e EAGAIN] [-k global|heap|stack] [-r REPORT.json]
 * The report holds, per word, its address, the waits that slept and timed
 * out, their total time, each wait's time and how much of it the thread
 * spent waiting for a CPU, and the EAGAIN returns. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload_time.h"

#define MAX_WORDS 64
#define MAX_WAITS 256

uint32_t counted_words[MAX_WORDS];

static struct word {
    uint32_t *addr;
    int count, slept, eagain, other;
    uint64_t wait_ns, each_ns[MAX_WAITS];
    uint64_t each_cpu_wait_ns[MAX_WAITS];   /* of each, waiting for a CPU (cpu_wait_ns) */
} words[MAX_WORDS];

static int nwords, eagains, wait_ms = 10;
static char kind = 'g';

static long futex_wait(uint32_t *w, uint32_t val, const struct timespec *t)
{
    return syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, t, NULL, 0);
}

static void *waiter(void *arg)
{
    struct word *w = arg;
    uint32_t on_stack = 0;
    if (kind == 's')
        w->addr = &on_stack;
    /* The word holds 0: waiting for 1 fails at once with EAGAIN. */
    for (int i = 0; i < eagains; i++)
        if (futex_wait(w->addr, 1, NULL) == -1 && errno == EAGAIN)
            w->eagain++;
    struct timespec t = {wait_ms / 1000, (wait_ms % 1000) * 1000000L};
    for (int i = 0; i < w->count; i++) {
        uint64_t q0 = cpu_wait_ns(), t0 = now_ns();
        long rc = futex_wait(w->addr, 0, &t);
        uint64_t took = now_ns() - t0;
        uint64_t queued = cpu_wait_ns() - q0;
        if (rc == -1 && errno == ETIMEDOUT) {
            w->each_cpu_wait_ns[w->slept] = queued;
            w->each_ns[w->slept++] = took;
            w->wait_ns += took;
        } else {
            w->other++;   /* a spurious return: the test sees it in the report */
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *report = NULL, *counts = "3,4,5";
    int c;
    while ((c = getopt(argc, argv, "c:w:e:k:r:")) != -1) {
        switch (c) {
        case 'c': counts = optarg; break;
        case 'w': wait_ms = atoi(optarg); break;
        case 'e': eagains = atoi(optarg); break;
        case 'k': kind = optarg[0]; break;
        case 'r': report = optarg; break;
        default:
            fprintf(stderr, "usage: %s [-c N1,N2,...] [-w WAIT_MS] [-e EAGAIN] [-k global|heap|stack] [-r REPORT]\n",
                    argv[0]);
            return 1;
        }
    }
    for (const char *p = counts; *p && nwords < MAX_WORDS; nwords++) {
        char *end;
        words[nwords].count = (int)strtol(p, &end, 10);
        if (end == p || words[nwords].count < 0 || words[nwords].count > MAX_WAITS) {
            fprintf(stderr, "futex_counts: bad -c '%s'\n", counts);
            return 1;
        }
        p = *end == ',' ? end + 1 : end;
    }
    if (!nwords || wait_ms <= 0 || eagains < 0 || !strchr("ghs", kind)) {
        fprintf(stderr, "futex_counts: bad arguments\n");
        return 1;
    }
    uint32_t *heap = calloc(MAX_WORDS, sizeof(*heap));
    pthread_t th[MAX_WORDS];
    for (int i = 0; i < nwords; i++) {
        words[i].addr = kind == 'h' ? &heap[i] : &counted_words[i];
        pthread_create(&th[i], NULL, waiter, &words[i]);
    }
    for (int i = 0; i < nwords; i++)
        pthread_join(th[i], NULL);

    FILE *f = report ? fopen(report, "w") : stdout;
    if (!f) {
        perror(report);
        return 1;
    }
    fprintf(f, "{\"pid\":%d,\"wait_ms\":%d,\"words\":[", getpid(), wait_ms);
    for (int i = 0; i < nwords; i++) {
        struct word *w = &words[i];
        fprintf(f, "%s{\"addr\":\"%p\",\"waits\":%d,\"other\":%d,\"eagain\":%d,\"wait_ns\":%llu,\"each_ns\":[",
                i ? "," : "", (void *)w->addr, w->slept, w->other, w->eagain, (unsigned long long)w->wait_ns);
        for (int j = 0; j < w->slept; j++)
            fprintf(f, "%s%llu", j ? "," : "", (unsigned long long)w->each_ns[j]);
        fputs("],\"each_cpu_wait_ns\":[", f);
        for (int j = 0; j < w->slept; j++)
            fprintf(f, "%s%llu", j ? "," : "", (unsigned long long)w->each_cpu_wait_ns[j]);
        fputs("]}", f);
    }
    fputs("]}\n", f);
    if (f != stdout)
        fclose(f);
    free(heap);
    return 0;
}
