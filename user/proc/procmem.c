#include "procmem.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int procmem_open(struct procmem *m, int pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/mem", pid);
    m->pid = pid;
    m->fd = open(path, O_RDONLY | O_CLOEXEC);
    return m->fd < 0 ? -1 : 0;
}

void procmem_close(struct procmem *m)
{
    if (m->fd >= 0)
        close(m->fd);
    m->fd = -1;
}

bool procmem_read(const struct procmem *m, uint64_t addr, void *buf, size_t len)
{
    if (m->fd < 0 || len > PROCMEM_MAX_READ || addr == 0 || addr + len < addr)
        return false;
    return pread(m->fd, buf, len, (off_t)addr) == (ssize_t)len;
}

bool procmem_u64(const struct procmem *m, uint64_t addr, uint64_t *v)
{
    return procmem_read(m, addr, v, sizeof(*v));
}

bool procmem_string(const struct procmem *m, uint64_t addr, char *buf, size_t len)
{
    /* Short reads near the end of a mapping: try a smaller window. */
    for (size_t want = len - 1; want >= 8; want /= 2) {
        ssize_t n = m->fd < 0 || !addr ? -1 : pread(m->fd, buf, want, (off_t)addr);
        if (n > 0) {
            buf[n] = '\0';
            return memchr(buf, '\0', (size_t)n) != NULL || (size_t)n == want;
        }
    }
    return false;
}
