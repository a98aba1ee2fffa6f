#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FUSE_SUPER_MAGIC 0x65735546

int safe_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
    struct open_how how = {.flags = flags | O_CLOEXEC, .resolve = resolve};
    int fd = -1;
    /* EAGAIN: a rename raced with the lookup; the kernel asks for a retry. */
    for (int tries = 0; tries < 3; tries++) {
        fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        if (fd >= 0 || errno != EAGAIN)
            break;
    }
    return fd;
}

int safe_open_at(int dirfd, const char *path, uint64_t resolve)
{
    int p = safe_openat2(dirfd, path, O_PATH, resolve);
    if (p < 0)
        return -1;
    struct stat st;
    struct statfs sf;
    int fd = -1, err = EINVAL;
    /* A FUSE file is served by a process that can stall every read. */
    if (fstat(p, &st) == 0 && S_ISREG(st.st_mode) && fstatfs(p, &sf) == 0 &&
        sf.f_type != FUSE_SUPER_MAGIC) {
        char self[32];
        snprintf(self, sizeof(self), "/proc/self/fd/%d", p);
        fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        err = errno;
    }
    close(p);
    errno = err;
    return fd;
}

int safe_open(const char *path)
{
    return safe_open_at(AT_FDCWD, path, RESOLVE_NO_MAGICLINKS);
}

int safe_proc_root(int pid)
{
    char root[32];
    snprintf(root, sizeof(root), "/proc/%d/root", pid);
    return open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int safe_open_in_root(int pid, const char *path)
{
    if (pid <= 0)
        return safe_open(path);
    int root = safe_proc_root(pid);
    if (root < 0)
        return -1;
    while (*path == '/')
        path++;
    int fd = safe_open_at(root, path, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
    int err = errno;
    close(root);
    errno = err;
    return fd;
}
