/* Who a process is, from /proc/PID/status: the pid it knows itself by and
 * the owner of the files it creates. A process in a container names its
 * files (/tmp/.java_pid<N>, /tmp/perf-<N>.map) with its own pid, which is
 * not the pid parktrace sees. */
#ifndef PT_PROCSTATUS_H
#define PT_PROCSTATUS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procstatus {
    int tgid;           /* its process: itself, unless PID is another thread's id */
    char state;         /* 'Z' for a zombie: exited, not yet reaped */
    int nspid;          /* pid in its innermost pid namespace (last of NSpid:) */
    int nslevels;       /* how many pid namespaces it is in, ours and those below (0: no NSpid line) */
    uid_t euid;         /* effective uid and gid, as this process sees them */
    gid_t egid;
    uint64_t sigcgt;    /* caught signals: bit N-1 for signal N */
};

/* 0, or -1 with errno set: ENOENT for no such process, ESRCH if it exited
 * while being read. */
int procstatus_read(int pid, struct procstatus *ps);

/* When process PID started (field 22 of /proc/PID/stat, in clock ticks
 * since boot): with the pid, it names one process, even after the pid has
 * been reused. 0, or -1 when there is no such process. */
int procstatus_start_time(int pid, uint64_t *start);

/* The same for thread TID of process PID; 1 when that thread has exited
 * or is exiting (a zombie, dead, or PF_EXITING: a killed process's leader
 * stays listed until it is reaped, and is no thread alive). */
int procstatus_thread_start_time(int pid, int tid, uint64_t *start);

/* Thread TID of process PID's name (/proc/PID/task/TID/comm) into OUT
 * (SIZE bytes, NUL-terminated, raw: sanitize before printing). 0, or -1
 * when it cannot be read (the thread has exited). */
int procstatus_thread_comm(int pid, int tid, char *out, size_t size);

/* How many threads PID has now (from its task directory's link count), or
 * -1: a bound for any thread count read from its memory. */
int procstatus_threads(int pid);

/* Whether no process has pid PID now (reaped): a zombie is not gone. One
 * signal-0 probe, no file read: sweeps ask it of thousands of pids. */
bool procstatus_gone(int pid);

/* Whether process PID is alive: there, and not a zombie (exited, not yet
 * reaped, which still answers kill(PID, 0)). Both the -p watch and the
 * recycled blockers' folding ask this one question. */
bool procstatus_alive(int pid);

/* The time PID has spent runnable but not running, from schedstat (a
 * zombie's too, until it is reaped); 0 when unknown. */
uint64_t procstatus_run_delay_ns(int pid);

#endif
