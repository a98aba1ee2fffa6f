/* A binary with one function linked 1 GiB away from the rest of its code
 * (tests/integration/test_hardening_files.py): its CFI spans a gap that a
 * page index over every page would turn into a table of megabytes. Two
 * threads take one mutex from that function, so parktrace sees its waits.
 *
 * build: cc -O2 -no-pie -pthread -Wl,--section-start=farcode=0x40000000
 * usage: far_code SECONDS */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline, section("farcode"))) void far_locked_sleep(void)
{
    pthread_mutex_lock(&lock);
    usleep(2000);
    pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
    time_t end = time(NULL) + *(int *)arg;
    while (time(NULL) < end)
        far_locked_sleep();
    return NULL;
}

int main(int argc, char **argv)
{
    int secs = argc > 1 ? atoi(argv[1]) : 5;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, &secs);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return 0;
}
