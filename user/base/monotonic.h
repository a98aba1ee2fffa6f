/* CLOCK_MONOTONIC in nanoseconds: the clock of every interval, timeout and
 * rate limit in user space, and the one bpf_ktime_get_ns() reads; and
 * parktrace's own CPU time, for what its parts cost. */
#ifndef PT_MONOTONIC_H
#define PT_MONOTONIC_H
#include <stdint.h>
#include <time.h>

/* A timespec (a clock's, or a file's times) in nanoseconds. */
static inline uint64_t timespec_ns(struct timespec ts)
{
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return timespec_ns(ts);
}

/* parktrace's own CPU time so far (every thread, user and system): on a
 * loaded machine wall time would mostly measure the wait for a CPU. */
static inline uint64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return timespec_ns(ts);
}

#endif
