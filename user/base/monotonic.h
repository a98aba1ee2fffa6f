/* CLOCK_MONOTONIC in nanoseconds: the clock of every interval, timeout and
 * rate limit in user space, and the one bpf_ktime_get_ns() reads. */
#ifndef PT_MONOTONIC_H
#define PT_MONOTONIC_H
#include <stdint.h>
#include <time.h>

static inline uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
