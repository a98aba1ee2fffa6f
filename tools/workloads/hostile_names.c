/* Threads whose names try to attack whoever prints them: terminal escapes,
 * newlines that would forge report rows, ';' that would forge collapsed
 * frames, trailing numbers that would forge a collapsed value, and bytes
 * that are not UTF-8. They contend on one mutex, so parktrace reports them.
 *
 * usage: hostile_names [-s SECONDS] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "workload_time.h"

static pthread_mutex_t contended = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int stop;

/* At most 15 bytes each: the kernel keeps 16 with the NUL. */
static const char *const thread_names[] = {
    "t\033]0;pwn\007",    /* sets a terminal's title */
    "row\nfake 1 2",       /* a forged line and value */
    "semi;colon;x 7",      /* forged frames */
    "bad\xff\xfe\xc3(",    /* not UTF-8 */
    "c1\xc2\x9b" "2J\r",   /* the 8-bit CSI, a carriage return */
};
#define NTHREADS (int)(sizeof(thread_names) / sizeof(thread_names[0]))

static void *contend(void *name)
{
    prctl(PR_SET_NAME, name);
    while (!stop) {
        pthread_mutex_lock(&contended);
        sleep_us(2000);
        pthread_mutex_unlock(&contended);
        sleep_us(100);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = 3;
    int c;
    while ((c = getopt(argc, argv, "s:")) != -1)
        if (c == 's')
            seconds = atof(optarg);
    /* The process name too: the COMM column and each collapsed line's root. */
    prctl(PR_SET_NAME, "\033[2J\033[H;9 9\xff\n");
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&t[i], NULL, contend, (void *)thread_names[i]);
    sleep_us((long)(seconds * 1e6));
    stop = 1;
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    return 0;
}
