#include "procroot.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int procroot_dir(int pid, const char *path)
{
    char root_path[64];
    snprintf(root_path, sizeof(root_path), "/proc/%d/root", pid);
    int root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return -1;
    struct open_how how = {
        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
        /* Resolve as if ROOT were "/"; no /proc magic links back out. */
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
    };
    while (*path == '/')
        path++;
    int fd;
    /* EAGAIN: a rename raced with the lookup; the kernel asks for a retry. */
    for (int tries = 0; tries < 3; tries++) {
        fd = (int)syscall(SYS_openat2, root, *path ? path : ".", &how, sizeof(how));
        if (fd >= 0 || errno != EAGAIN)
            break;
    }
    int saved = errno;
    close(root);
    errno = saved;
    return fd;
}
