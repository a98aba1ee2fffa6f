/* A JVM's listed thread ids turned into the host's (jvm_tids.c), on this
 * process's own threads: ids of its threads are kept, any other thread's
 * (pid 1's, a made-up one) is dropped, and with ids read as a namespace's
 * (here the same numbers: this process is in the host's namespace) the
 * task list pairs them. */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "jvm_tids.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int started, done, tids[2];

static void *thread(void *arg)
{
    pthread_mutex_lock(&lock);
    tids[(long)arg] = (int)syscall(SYS_gettid);
    started++;
    pthread_cond_broadcast(&cond);
    while (!done)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void both_ways(bool in_ns)
{
    struct jvm_tids m;
    jvm_tids_open(&m, getpid(), in_ns);
    /* Two of ours, pid 1's main thread, an id no thread has. */
    int ids[] = {tids[0], 1, tids[1], 0x3ffffff0};
    uint64_t threads[] = {10, 20, 30, 40};
    int n = jvm_tids_to_host(&m, ids, threads, 4, NULL, 0);
    CHECK(n == 2 && ids[0] == tids[0] && ids[1] == tids[1] && threads[0] == 10 && threads[1] == 30,
          "%s: our two threads kept with their JavaThread*, the others dropped (kept %d: %d %d)",
          in_ns ? "as a namespace's ids" : "as host ids", n, ids[0], ids[1]);
    /* Known ids are not looked at again; pairs are kept between calls. */
    int again[] = {tids[1]};
    uint64_t t2[] = {30};
    int sorted[] = {tids[0] < tids[1] ? tids[0] : tids[1], tids[0] < tids[1] ? tids[1] : tids[0]};
    uint64_t rescans = m.rescans;
    n = jvm_tids_to_host(&m, again, t2, 1, sorted, 2);
    CHECK(n == 1 && again[0] == tids[1] && m.rescans == rescans, "%s: a known thread kept without a rescan",
          in_ns ? "as a namespace's ids" : "as host ids");
    jvm_tids_close(&m);
}

int main(void)
{
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, thread, (void *)i);
    pthread_mutex_lock(&lock);
    while (started < 2)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    both_ways(false);
    both_ways(true);
    pthread_mutex_lock(&lock);
    done = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return CHECK_DONE();
}
