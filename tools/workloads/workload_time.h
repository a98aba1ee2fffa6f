/* The C workloads' clock, sleep and /proc reads: CLOCK_MONOTONIC
 * nanoseconds to time their own waits, a sleep that resumes after a signal
 * so a hold is never cut short, and their own threads' /proc files. */
#ifndef WORKLOAD_TIME_H
#define WORKLOAD_TIME_H
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's time waiting on a run queue so far (ns, the second
 * field of /proc/thread-self/schedstat), 0 when it cannot be read. Read
 * around a timed wait, it is how much of the wait's own clock went to
 * waiting for a CPU: under load, some of that falls outside the system
 * call a tracer times. */
/* Reads the small /proc file PATH into BUF (SIZE bytes, NUL-terminated):
 * its length, or -1. */
static inline ssize_t read_proc_file(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return n;
}

static inline uint64_t cpu_wait_ns(void)
{
    char buf[96];
    if (read_proc_file("/proc/thread-self/schedstat", buf, sizeof(buf)) < 0)
        return 0;
    char *p = strchr(buf, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

static inline void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts))
        ;
}

#endif
