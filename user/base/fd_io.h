/* Whole reads and writes on a descriptor: the unwind cache's files and the
 * pipe from the child that builds a binary's unwind rows. */
#ifndef PT_FD_IO_H
#define PT_FD_IO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes LEN bytes of BUF, resuming after signals; false on any failure. */
bool fd_write_all(int fd, const void *buf, size_t len);

/* Reads LEN bytes into BUF, resuming after signals; false on end of file
 * or failure, or, when DEADLINE_MS (monotonic milliseconds) is not -1, once
 * it has passed with bytes still missing. */
bool fd_read_all(int fd, void *buf, size_t len, int64_t deadline_ms);

#endif
