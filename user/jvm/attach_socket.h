/* The way into a JVM's attach listener: its socket /tmp/.java_pid<N>, in
 * the JVM's own /tmp under the pid it knows itself by, checked to be the
 * JVM's before use. When there is none, the trigger file and the one
 * SIGQUIT that make HotSpot 17 open it. */
#ifndef PT_ATTACH_SOCKET_H
#define PT_ATTACH_SOCKET_H
#include <stddef.h>
#include <stdint.h>

/* Monotonic milliseconds: a deadline is attach_now_ms() + timeout. */
int64_t attach_now_ms(void);
/* What is left of DEADLINE, 0 once it has passed. */
int attach_left_ms(int64_t deadline);

/* A connected non-blocking socket to the attach listener of JVM PID (host
 * pid), or -1 with a one-line reason in ERR. Gives up at DEADLINE. When
 * START_TIME is not 0, PID must still be the process that started then
 * (procstatus_start_time): a pid reused by another program is never
 * signalled. */
int attach_socket_open(int pid, uint64_t start_time, int64_t deadline, char *err, size_t errlen);

#endif
