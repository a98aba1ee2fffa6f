#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int gate = -1;
static pid_t child = -1;

int launch_prepare(char **command)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -1;
    child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (child == 0) {
        char go;
        close(fds[1]);
        /* EOF without a byte means parktrace gave up: do not run. */
        if (read(fds[0], &go, 1) != 1)
            _exit(126);
        close(fds[0]);
        execvp(command[0], command);
        fprintf(stderr, "parktrace: cannot run %s: %s\n", command[0], strerror(errno));
        _exit(127);
    }
    close(fds[0]);
    gate = fds[1];
    return child;
}

void launch_release(void)
{
    if (gate >= 0) {
        if (write(gate, "g", 1) != 1)
            perror("parktrace: release command");
        close(gate);
        gate = -1;
    }
}

void launch_abort(void)
{
    if (gate >= 0) {
        close(gate);
        gate = -1;
    }
    if (child > 0)
        waitpid(child, NULL, 0);
}
