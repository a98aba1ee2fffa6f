/* The library tests/workloads_src/truncated_waits.c loads with dlopen after
 * its first waits. Built by tests/integration/test_stacks.py without frame
 * pointers but with CFI: until parktrace reads the process's mappings again,
 * the kernel walk has no table for it and must step over it by rbp, which
 * holds no frame address here. */
#include <pthread.h>

void plugin_lock(pthread_mutex_t *m);

__attribute__((noinline)) void plugin_lock(pthread_mutex_t *m)
{
    /* Code without frame pointers uses rbp as it likes; zeroing it makes the
     * frame-pointer step fail every time rather than on whatever -O2 left. */
    __asm__ volatile("xor %%ebp, %%ebp" ::: "rbp");
    pthread_mutex_lock(m);
    __asm__ volatile("" ::: "memory");   /* not a tail call: keeps this frame */
}
