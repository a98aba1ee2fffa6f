#include "jvm_attach.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attach_socket.h"

/* HotSpot 17's limits (AttachOperation): longer requests are cut off. */
#define OP_NAME_MAX 16
#define OP_ARG_MAX 1024

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Waits until FD is ready for EVENTS; false at the deadline. */
static bool wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, attach_left_ms(deadline));
        if (n > 0)
            return true;
        if (n == 0 || errno != EINTR)
            return false;
    }
}

/* Sends LEN bytes; false at the deadline or on error. */
static bool send_all(int s, const char *buf, size_t len, int64_t deadline)
{
    while (len) {
        /* MSG_NOSIGNAL: a JVM that exits must not kill the caller with SIGPIPE. */
        ssize_t n = send(s, buf, len, MSG_NOSIGNAL);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
        } else if (n < 0 && errno != EINTR && (errno != EAGAIN || !wait_fd(s, POLLOUT, deadline)))
            return false;
    }
    return true;
}

/* The request: protocol version 1, the operation, exactly three arguments. */
static size_t build_request(char *buf, const char *const args[3])
{
    const char *parts[5] = {"1", args[0], args[1] ? args[1] : "", args[2] ? args[2] : "", ""};
    size_t n = 0;
    for (int i = 0; i < 5; i++) {
        size_t len = strlen(parts[i]) + 1;
        memcpy(buf + n, parts[i], len);
        n += len;
    }
    return n;
}

/* Reads the reply, "CODE\n" then the output, until the JVM closes the
 * connection, OUT is full or the deadline passes. The JVM replies only
 * once the command has run, so output cut short loses nothing else. */
static int read_reply(int s, int64_t deadline, char *out, size_t outlen, int *code, char *err, size_t errlen)
{
    char head[16], buf[4096];
    size_t hn = 0, on = 0;
    bool have_code = false;
    while (!have_code || on + 1 < outlen) {
        ssize_t n = recv(s, buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            break;   /* closed: the JVM is done, or gone */
        if (n < 0) {
            if (errno == EAGAIN && !wait_fd(s, POLLIN, deadline))
                break;
            continue;
        }
        for (ssize_t i = 0; i < n; i++) {
            if (have_code) {
                if (on + 1 < outlen)
                    out[on++] = buf[i];
            } else if (buf[i] != '\n') {
                if (hn == sizeof(head) - 1)
                    return fail(err, errlen, "malformed reply from the JVM (no result code)");
                head[hn++] = buf[i];
            } else {
                head[hn] = '\0';
                char *end;
                errno = 0;
                long v = strtol(head, &end, 10);
                if (hn == 0 || *end || errno || v < INT_MIN || v > INT_MAX)
                    return fail(err, errlen, "malformed reply from the JVM (result code '%s')", head);
                *code = (int)v;
                have_code = true;
            }
        }
    }
    if (outlen)
        out[on] = '\0';
    if (!have_code)
        return fail(err, errlen, attach_left_ms(deadline) ? "the JVM closed the connection without replying"
                                                          : "timed out waiting for the JVM's reply");
    return 0;
}

static bool valid_args(const char *const args[3])
{
    return args && args[0] && args[0][0] && strlen(args[0]) <= OP_NAME_MAX &&
           (!args[1] || strlen(args[1]) <= OP_ARG_MAX) && (!args[2] || strlen(args[2]) <= OP_ARG_MAX);
}

int jvm_attach_command(int pid, const char *const args[3], char *out, size_t outlen, int timeout_ms, char *err,
                       size_t errlen)
{
    return jvm_attach_command_to(pid, 0, args, out, outlen, timeout_ms, err, errlen);
}

int jvm_attach_command_to(int pid, uint64_t start_time, const char *const args[3], char *out, size_t outlen,
                          int timeout_ms, char *err, size_t errlen)
{
    int64_t deadline = attach_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    if (outlen)
        out[0] = '\0';
    if (errlen)
        err[0] = '\0';
    if (!valid_args(args))
        return fail(err, errlen, "invalid attach command (an operation of up to %d characters and two "
                                 "arguments of up to %d)", OP_NAME_MAX, OP_ARG_MAX);
    int s = attach_socket_open(pid, start_time, deadline, err, errlen);
    if (s < 0)
        return -1;
    char req[8 + OP_NAME_MAX + 3 * (OP_ARG_MAX + 1)];
    size_t len = build_request(req, args);
    int code = -1;
    if (!send_all(s, req, len, deadline))
        fail(err, errlen, "JVM %d: sending the command failed: %s", pid,
             errno == EAGAIN ? "timed out" : strerror(errno));
    else if (read_reply(s, deadline, out, outlen, &code, err, errlen) == 0 && code == -1)
        /* JNI_ERR: the command threw; the first line of output says why. */
        fail(err, errlen, "JVM %d rejected '%s': %.*s", pid, args[1] ? args[1] : args[0],
             outlen ? (int)strcspn(out, "\n") : 0, outlen ? out : "");
    close(s);
    return code;
}
