#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int gate = -1;
static int exec_status = -1;   /* the child's errno if exec fails; EOF if it runs */
static pid_t child = -1;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

int launch_prepare(char **command)
{
    int go_pipe[2], status_pipe[2];
    if (pipe2(go_pipe, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(status_pipe, O_CLOEXEC) < 0) {
        close(go_pipe[0]);
        close(go_pipe[1]);
        return -1;
    }
    child = fork();
    if (child < 0) {
        int err = errno;
        close(go_pipe[0]);
        close(go_pipe[1]);
        close(status_pipe[0]);
        close(status_pipe[1]);
        errno = err;
        return -1;
    }
    if (child == 0) {
        char go;
        close(go_pipe[1]);
        close(status_pipe[0]);
        /* EOF without a byte means parktrace gave up: do not run. */
        if (read(go_pipe[0], &go, 1) != 1)
            _exit(126);
        close(go_pipe[0]);
        execvp(command[0], command);
        /* The status pipe closed on a successful exec; here it says why not. */
        int err = errno;
        ssize_t told = write(status_pipe[1], &err, sizeof(err));
        (void)told;   /* nothing more to do if even this fails */
        _exit(127);
    }
    close(go_pipe[0]);
    close(status_pipe[1]);
    gate = go_pipe[1];
    exec_status = status_pipe[0];
    return child;
}

/* PATH open if it is an executable regular file (never a FIFO's open). */
static int open_executable(const char *path)
{
    struct stat st;
    if (access(path, X_OK) != 0)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int launch_open_program(char *const *command)
{
    if (strchr(command[0], '/'))
        return open_executable(command[0]);
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";    /* execvp's own default */
    char file[PATH_MAX];
    for (const char *dir = path; dir; dir = strchr(dir, ':') ? strchr(dir, ':') + 1 : NULL) {
        size_t n = strcspn(dir, ":");
        int len = snprintf(file, sizeof(file), "%.*s%s%s", (int)n, dir, n ? "/" : "", command[0]);
        int fd = len > 0 && (size_t)len < sizeof(file) ? open_executable(file) : -1;
        if (fd >= 0)
            return fd;
    }
    return -1;
}

int launch_release(void)
{
    int err = 0;
    if (gate < 0)
        return 0;
    if (write(gate, "g", 1) != 1)
        err = errno;
    close_fd(&gate);
    if (!err) {
        ssize_t n;
        while ((n = read(exec_status, &err, sizeof(err))) < 0 && errno == EINTR)
            ;
        if (n != sizeof(err))
            err = 0;
    }
    close_fd(&exec_status);
    if (err && child > 0)
        waitpid(child, NULL, 0);
    return err;
}

void launch_abort(void)
{
    close_fd(&gate);
    close_fd(&exec_status);
    if (child > 0)
        waitpid(child, NULL, 0);
}
