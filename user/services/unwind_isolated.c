#include "unwind_isolated.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd_io.h"
#include "monotonic.h"

#define CHILD_MEMORY (512ull << 20)   /* beyond what parktrace has mapped: libjvm needs ~100 MiB */
#define CHILD_CPU_S 10
#define CHILD_WALL_MS 30000
#define MAX_ROWS (1u << 25)

struct reply_head {
    uint64_t n;
    char build_id[sizeof(((struct unwind_rows *)0)->build_id)];
};

/* The address space parktrace has now: the child's limit is on top of it. */
static uint64_t mapped_bytes(void)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "re");
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void child(const struct file_ref *f, int out, uint64_t limit)
{
    struct rlimit as = {limit, limit}, cpu = {CHILD_CPU_S, CHILD_CPU_S};
    struct unwind_rows r;
    signal(SIGINT, SIG_IGN);       /* parktrace's Ctrl-C is the parent's to handle */
    signal(SIGTERM, SIG_DFL);
    if (setrlimit(RLIMIT_AS, &as) || setrlimit(RLIMIT_CPU, &cpu) || unwind_rows_build_ref(f, &r))
        _exit(1);
    struct reply_head h = {.n = r.n};
    memcpy(h.build_id, r.build_id, sizeof(h.build_id));
    _exit(fd_write_all(out, &h, sizeof(h)) && fd_write_all(out, r.rows, r.n * sizeof(*r.rows)) ? 0 : 1);
}

int unwind_rows_build_isolated(const struct file_ref *f, struct unwind_rows *out)
{
    memset(out, 0, sizeof(*out));
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return -1;
    uint64_t limit = mapped_bytes() + CHILD_MEMORY;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        child(f, p[1], limit);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return -1;
    }
    int64_t deadline = (int64_t)(monotonic_ns() / 1000000) + CHILD_WALL_MS;
    struct reply_head h;
    bool ok = fd_read_all(p[0], &h, sizeof(h), deadline) && h.n && h.n <= MAX_ROWS &&
              (out->rows = malloc(h.n * sizeof(*out->rows))) &&
              fd_read_all(p[0], out->rows, h.n * sizeof(*out->rows), deadline);
    close(p[0]);
    kill(pid, SIGKILL);          /* gone already, or out of time */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (!ok) {
        free(out->rows);
        memset(out, 0, sizeof(*out));
        return -1;
    }
    out->n = h.n;
    memcpy(out->build_id, h.build_id, sizeof(out->build_id));
    out->build_id[sizeof(out->build_id) - 1] = '\0';
    return 0;
}
