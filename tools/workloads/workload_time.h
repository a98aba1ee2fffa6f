/* The C workloads' clock and sleep: CLOCK_MONOTONIC nanoseconds to time
 * their own waits, and a sleep that resumes after a signal so a hold is
 * never cut short. */
#ifndef WORKLOAD_TIME_H
#define WORKLOAD_TIME_H
#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts))
        ;
}

#endif
