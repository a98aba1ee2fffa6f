/* Critical section pressure (Free Lunch): the share of a process's working
 * thread time lost waiting on one lock. The denominator is the thread time
 * the process's threads were alive (kept by the kernel per registered
 * process) minus their idle time: their interruptible sleeps outside futex
 * waits (kept by the kernel too) and their wait-role waits. */
#ifndef PT_CSP_H
#define PT_CSP_H
#include <stdbool.h>
#include <stdint.h>

#include "proc_lives.h"

#define CSP_MAX_PROCS 8192
#define CSP_BUCKETS 4096
#define CSP_LATE 64
#define CSP_LATE_TRIES 8

struct csp_proc {
    int pid;
    int next;                /* the next in its hash chain (index + 1, 0 ends it) */
    uint64_t before_ns;      /* estimated alive time between run start and registration */
    uint64_t window_alive;   /* alive time at the current window's start */
    uint64_t window_sleep;   /* idle sleep time then */
    /* Once its process has exited: its totals, which no longer move (the
     * kernel's entry is let go), and when that was seen. */
    bool exited;
    uint64_t final_alive, final_sleep, exited_ns;
    /* Its alive and idle sleep time as read for a report's NOW (at_ns):
     * read at once for every process (csp_read_at), not when a row first
     * asks, milliseconds later, with threads that died meanwhile. */
    uint64_t at_ns, at_alive, at_sleep;
    bool at_ok;
};

struct csp {
    struct proc_lives lives; /* the kernel's account of the processes' threads */
    uint64_t run_start;
    struct csp_proc *p;
    int n;
    int head[CSP_BUCKETS];   /* hash chains by pid (index + 1) */
    /* Processes found with every thread exiting and no life kept yet: the
     * last thread's exit had not reached the kernel's tracepoint. Looked
     * at again at the next reads, a few times (retry_late). */
    struct {
        int pid;
        uint8_t tries;
    } late[CSP_LATE];
    int nlate;
    uint64_t evicted;        /* exited processes let go for new ones (their rows lose CSP) */
    uint64_t refused;        /* processes not watched: the table held live ones only */
};

/* LIVES: the kernel's maps of the processes' thread lives. */
void csp_init(struct csp *c, const struct proc_lives *lives, uint64_t run_start);

/* Starts counting process PID's alive thread time; its threads now count as
 * born at NOW, and the time since the run started as spent with as many. */
void csp_watch(struct csp *c, int pid, uint64_t now);

/* Reads every watched process's alive time at NOW, a report's end, for
 * the report and the next window's start to share. */
void csp_read_at(struct csp *c, uint64_t now);

/* Thread time PID's threads were alive from the run's start to NOW, and
 * the part of it they slept idle (interruptible sleeps outside futex waits,
 * since PID was watched); false when PID is not watched. */
bool csp_alive(struct csp *c, int pid, uint64_t now, uint64_t *alive, uint64_t *sleep);

/* The same since the current window began. */
bool csp_alive_window(struct csp *c, int pid, uint64_t now, uint64_t *alive, uint64_t *sleep);

/* Freezes the totals of watched processes that have exited and lets their
 * kernel entries go (the kernel's table holds live processes only); a full
 * table later lets the oldest of them go for a new process. Called about
 * once a second. */
void csp_forget_exited(struct csp *c, uint64_t now);

/* Starts a new window at NOW for every watched process. */
void csp_roll(struct csp *c, uint64_t now);

/* WAIT / (ALIVE - IDLE), within [0, 1]; false when nothing worked. */
bool csp_value(uint64_t wait_ns, uint64_t alive_ns, uint64_t idle_ns, double *out);

void csp_free(struct csp *c);

#endif
