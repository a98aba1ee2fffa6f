/* Opening a file where another user can stall the lookup, with a
 * deadline. A lookup through a user's mounts can wait on a process of
 * theirs (a FUSE server under an overlay) for good, and a thread stuck
 * there cannot be ended on its own. The open runs instead in a child task
 * that shares parktrace's memory (no copy to make) but not its descriptors
 * (it keeps only the one it needs: a child stuck for good must not keep
 * parktrace's pipes, sockets and BPF links open after parktrace exits),
 * and the child is killed at the deadline. A fatal signal ends most such
 * waits; where the kernel will not end one (a FUSE request its server has
 * read already waits for the answer), the child is left to it alone. */
#ifndef PT_DEADLINE_OPEN_H
#define PT_DEADLINE_OPEN_H

/* Runs OPEN(ARG) in a child that keeps only descriptor KEEP of
 * parktrace's, and waits at most TIMEOUT_MS for it. OPEN returns a
 * descriptor of the child's, or -1 with errno set; deadline_open returns
 * it as one of parktrace's, or -1 with that errno, or with ETIMEDOUT when
 * the child was killed at the deadline (EBUSY once too many children
 * outlived their kill). OPEN must make system calls only: no allocation,
 * no locks, no stdio. ARG (ARG_SIZE bytes) is copied for the child, and
 * back once it has returned. */
int deadline_open(int (*open)(void *), void *arg, unsigned long arg_size, int keep, int timeout_ms);

/* Children killed at their deadline, and those of them that did not die
 * (left, with the memory they run on), since the start. */
unsigned long deadline_opens_killed(void);
unsigned long deadline_opens_stuck(void);

#endif
