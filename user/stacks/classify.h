/* A futex's class and role, read off the frames of a waiting stack. */
#ifndef PT_CLASSIFY_H
#define PT_CLASSIFY_H
#include <stdbool.h>
#include <stdint.h>
#include "options.h"
#include "stacks.h"

struct pt_class {
    const char *cls;   /* pthread_mutex, pthread_rwlock, pthread_cond, sem, futex */
    bool wait;         /* role wait (else lock) */
    uint32_t field;    /* a Go semaphore's offset in the object waited on (its id less it) */
};

/* The innermost frame naming a known primitive decides: a condition wait
 * that re-takes its mutex waits in the mutex code, not the condvar's. */
void classify_futex(const struct pt_stack *st, struct pt_class *out);

/* True when WAKER, the stack that ended a wait, is a thread's exit
 * releasing its joiners: the waits were joins (metrics.md, "Idle, joins and
 * runtime locks"), whatever primitive the runtime joins on. CPython's
 * Thread.join takes the thread's state lock, a semaphore like any Lock, and
 * only the release at the thread's end (release_sentinel) tells it apart. */
bool classify_join_waker(const struct pt_stack *waker);

/* A Java blocker's role from its class name, else from its superclasses
 * (SUPERS: names nearest first, ';'-separated; may be NULL or empty), else
 * from words in its name. "<no blocker>" waits. */
void classify_java(const char *cls, const char *supers, struct pt_class *out);

/* A goroutine park's class, role and field (docs/go.md) from WHAT it
 * parked for (enum pt_go_wait) and, for a semaphore, the innermost frame
 * of package sync on its stack ST. */
void classify_go(const struct pt_stack *st, uint32_t what, struct pt_class *out);

/* Applies --role CLASS=lock|wait; matches the class or its simple name. */
void classify_override(const struct pt_options *o, const char *cls, bool *wait);

#endif
