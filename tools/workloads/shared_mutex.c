/* Two processes contend on one process-shared pthread mutex that lives in a
 * MAP_SHARED mapping, so the futex is not private: parktrace must show one
 * blocker for both. Each process times its own blocked lock calls.
 * usage: shared_mutex [-s SECONDS] [-r REPORT.json] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload_time.h"

struct shared {
    pthread_mutex_t lock;
    uint64_t blocked[2], blocked_ns[2];
    int pids[2];
};

static void run(struct shared *sh, int who, double seconds)
{
    struct timespec hold = {0, 2000000}, think = {0, 1000000};
    uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
    sh->pids[who] = getpid();
    while (now_ns() < end) {
        if (pthread_mutex_trylock(&sh->lock) != 0) {
            uint64_t t0 = now_ns();
            pthread_mutex_lock(&sh->lock);
            sh->blocked_ns[who] += now_ns() - t0;
            sh->blocked[who]++;
        }
        nanosleep(&hold, NULL);
        pthread_mutex_unlock(&sh->lock);
        nanosleep(&think, NULL);
    }
}

int main(int argc, char **argv)
{
    double seconds = 2;
    const char *report = NULL;
    int c;
    while ((c = getopt(argc, argv, "s:r:")) != -1) {
        if (c == 's') seconds = atof(optarg);
        else if (c == 'r') report = optarg;
        else return 1;
    }
    struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 1;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&sh->lock, &a);
    pid_t child = fork();
    if (child == 0) {
        run(sh, 1, seconds);
        _exit(0);
    }
    run(sh, 0, seconds);
    waitpid(child, NULL, 0);
    FILE *f = report ? fopen(report, "w") : stdout;
    if (!f)
        return 1;
    fprintf(f, "{\"pids\":[%d,%d],\"blocked\":%llu,\"blocked_ns\":%llu}\n", sh->pids[0], sh->pids[1],
            (unsigned long long)(sh->blocked[0] + sh->blocked[1]),
            (unsigned long long)(sh->blocked_ns[0] + sh->blocked_ns[1]));
    if (f != stdout)
        fclose(f);
    return 0;
}
