#include "safe_open.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FUSE_SUPER_MAGIC 0x65735546

static int safe_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
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

/* PATH as process PID sees it, resolved inside PID's root: a directory
 * (O_PATH) when DIR, else a regular file opened as safe_open_at does. */
static int in_root(int pid, const char *path, bool dir)
{
    char root_path[32];
    snprintf(root_path, sizeof(root_path), "/proc/%d/root", pid);
    int root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return -1;
    while (*path == '/')
        path++;
    /* Resolved as if ROOT were "/"; no /proc magic links back out. */
    const uint64_t resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    int fd = dir ? safe_openat2(root, *path ? path : ".", O_PATH | O_DIRECTORY, resolve)
                 : safe_open_at(root, path, resolve);
    int err = errno;
    close(root);
    errno = err;
    return fd;
}

int safe_open_in_root(int pid, const char *path)
{
    return pid > 0 ? in_root(pid, path, false) : safe_open(path);
}

int safe_dir_in_root(int pid, const char *path)
{
    return in_root(pid, path, true);
}
