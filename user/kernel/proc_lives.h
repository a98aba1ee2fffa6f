/* The kernel's account of each watched process's thread lives and idle
 * sleeps (CSP's denominator): the procs map, the lives of threads that
 * waited and died before their process was watched (unwatched_life) or
 * ended (exited_life), the
 * threads parktrace caused and leaves out (uncounted), and procs_gen,
 * bumped so that threads read procs again. The only code that touches
 * those maps; csp.c asks it. */
#ifndef PT_PROC_LIVES_H
#define PT_PROC_LIVES_H
#include <stdbool.h>
#include <stdint.h>
#include "../bpf/parktrace.h"

struct tracer;

struct proc_lives {
    int procs_fd, unwatched_fd, uncounted_fd, exited_fd;   /* -1: not there */
    volatile uint32_t *gen;                     /* NULL: not there */
};

/* The tracer's maps. */
struct proc_lives proc_lives_of(struct tracer *t);

/* Makes PID's entry, zeroed, when it has none: false when it had one or
 * the map is full. */
bool proc_lives_enter(const struct proc_lives *pl, int pid);
bool proc_lives_read(const struct proc_lives *pl, int pid, struct pt_proc *out);
/* Replaces PID's existing entry. */
void proc_lives_write(const struct proc_lives *pl, int pid, const struct pt_proc *pr);
void proc_lives_forget(const struct proc_lives *pl, int pid);
/* Takes the lives of PID's threads that waited and died unwatched. */
bool proc_lives_take_unwatched(const struct proc_lives *pl, int pid, uint64_t *died_ns);
/* Takes the lives of the threads that waited in PID, a process that ended
 * before it was watched. */
bool proc_lives_take_exited(const struct proc_lives *pl, int pid, uint64_t *lived_ns);
/* Threads read procs again at their next sleep. */
void proc_lives_changed(const struct proc_lives *pl);

/* Takes thread TID of process PID out of its alive time from SINCE (when
 * it was born, near enough) on, and its sleeps out of the idle time: a
 * thread parktrace caused, such as the JVM's attach listener. */
void proc_lives_uncount_thread(const struct proc_lives *pl, int pid, int tid, uint64_t since);

#endif
