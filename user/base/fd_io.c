#include "fd_io.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "monotonic.h"

bool fd_write_all(int fd, const void *buf, size_t len)
{
    for (size_t put = 0; put < len;) {
        ssize_t w = write(fd, (const char *)buf + put, len - put);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        put += (size_t)w;
    }
    return true;
}

bool fd_read_all(int fd, void *buf, size_t len, int64_t deadline_ms)
{
    for (size_t got = 0; got < len;) {
        if (deadline_ms != -1) {
            int64_t left = deadline_ms - (int64_t)(monotonic_ns() / 1000000);
            struct pollfd p = {.fd = fd, .events = POLLIN};
            if (left <= 0 || poll(&p, 1, (int)left) <= 0)
                return false;
        }
        ssize_t r = read(fd, (char *)buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}
