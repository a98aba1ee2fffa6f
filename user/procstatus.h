/* Who a process is, from /proc/PID/status: the pid it knows itself by and
 * the owner of the files it creates. A process in a container names its
 * files (/tmp/.java_pid<N>, /tmp/perf-<N>.map) with its own pid, which is
 * not the pid parktrace sees. */
#ifndef PT_PROCSTATUS_H
#define PT_PROCSTATUS_H
#include <stdint.h>
#include <sys/types.h>

struct procstatus {
    int nspid;          /* pid in its innermost pid namespace (last of NSpid:) */
    uid_t euid;         /* effective uid and gid, as this process sees them */
    gid_t egid;
    uint64_t sigcgt;    /* caught signals: bit N-1 for signal N */
};

/* 0, or -1 with errno set: ENOENT for no such process, ESRCH if it exited
 * while being read. */
int procstatus_read(int pid, struct procstatus *ps);

#endif
