/* A JVM's thread ids as its thread list holds them (OSThread::_thread_id:
 * ids in the JVM's own pid namespace, a container's) turned into the ids
 * the host and the kernel's programs know, and checked to be threads of
 * that process: a list read from a process's memory may name anything. */
#ifndef PT_JVM_TIDS_H
#define PT_JVM_TIDS_H
#include <stdbool.h>
#include <stdint.h>

struct tid_pair {
    int ns, host;
};

struct jvm_tids {
    int pid;
    bool in_ns;              /* its pid namespace is not parktrace's */
    struct tid_pair *v;      /* sorted by ns id */
    int n;
    uint64_t rescans;        /* times its task list was read again */
};

/* For process PID; IN_NS when the ids it knows itself by are not the
 * host's (NSpid differs from the pid). */
void jvm_tids_open(struct jvm_tids *m, int pid, bool in_ns);
void jvm_tids_close(struct jvm_tids *m);

/* Turns the N ids at TIDS into host thread ids of the process, in place,
 * THREADS moved in step; ids that are no thread of it are dropped.
 * KNOWN (sorted, NKNOWN) are host ids checked before: not looked at
 * again. Returns how many are kept. */
int jvm_tids_to_host(struct jvm_tids *m, int *tids, uint64_t *threads, int n, const int *known, int nknown);

#endif
