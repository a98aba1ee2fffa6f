#include "procroot.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <unistd.h>

#include "safe_open.h"

int procroot_dir(int pid, const char *path)
{
    int root = safe_proc_root(pid);
    if (root < 0)
        return -1;
    while (*path == '/')
        path++;
    /* Resolved as if ROOT were "/"; no /proc magic links back out. */
    int fd = safe_openat2(root, *path ? path : ".", O_PATH | O_DIRECTORY, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
    int saved = errno;
    close(root);
    errno = saved;
    return fd;
}
