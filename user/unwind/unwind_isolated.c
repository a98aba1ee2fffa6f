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
#include "procstatus.h"

#define CHILD_MEMORY (512ull << 20)   /* beyond what parktrace has mapped: libjvm needs ~100 MiB */
/* libjvm's rows take 0.15 s of CPU: a binary that needs more than this
 * many times as much is someone's trap. */
#define CHILD_CPU_S 5
#define CHILD_WALL_MS 15000
#define MAX_ROWS (1u << 25)

struct reply_head {
    uint64_t n;
    uint64_t work_ns;         /* the child's own clock over the build, its fork and exit left out */
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
    /* Below the workloads: a user's binary must not take their CPUs. */
    if (setpriority(PRIO_PROCESS, 0, 19))
        _exit(1);
    uint64_t t0 = monotonic_ns();
    if (setrlimit(RLIMIT_AS, &as) || setrlimit(RLIMIT_CPU, &cpu) || unwind_rows_build_ref(f, &r))
        _exit(1);
    struct reply_head h = {.n = r.n, .work_ns = monotonic_ns() - t0};
    memcpy(h.build_id, r.build_id, sizeof(h.build_id));
    _exit(fd_write_all(out, &h, sizeof(h)) && fd_write_all(out, r.rows, r.n * sizeof(*r.rows)) ? 0 : 1);
}

struct isolated_build {
    pid_t pid;
    int fd;                   /* the child's reply, non-blocking */
    uint64_t started_ns;
    uint64_t fork_ns;         /* the parent's time in fork(): copying parktrace's page tables */
    struct reply_head h;
    size_t head_got;          /* bytes of h read */
    struct pt_urow *rows;     /* h.n rows once h is in */
    size_t rows_got;          /* bytes of rows read */
};

struct isolated_build *isolated_build_start(const struct file_ref *f)
{
    struct isolated_build *b = calloc(1, sizeof(*b));
    int p[2];
    if (!b || pipe2(p, O_CLOEXEC)) {
        free(b);
        return NULL;
    }
    uint64_t limit = mapped_bytes() + CHILD_MEMORY;
    fflush(NULL);
    uint64_t fork_start = monotonic_ns();
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        child(f, p[1], limit);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        free(b);
        return NULL;
    }
    uint64_t now = monotonic_ns();
    *b = (struct isolated_build){.pid = pid, .fd = p[0], .started_ns = now, .fork_ns = now - fork_start};
    if (fcntl(p[0], F_SETFL, O_NONBLOCK)) {
        isolated_build_cancel(b);
        return NULL;
    }
    return b;
}

int isolated_build_fd(const struct isolated_build *b)
{
    return b->fd;
}

static uint64_t isolated_build_age_ns(const struct isolated_build *b)
{
    return monotonic_ns() - b->started_ns;
}

/* What B cost its file's owner (isolated_build_poll). */
static uint64_t build_cost_ns(const struct isolated_build *b)
{
    uint64_t age = isolated_build_age_ns(b), delay = procstatus_run_delay_ns(b->pid);
    /* A child that replied cost its build, the fork that made it and its
     * exit, which tears down what the fork copied (taken as long): the
     * wall time between held the loop's notice too (600 of a user's tiny
     * libraries: 8.6 s of wall time, past its 8 s, on a quiet CI host,
     * against 0.3 s of builds and 1.3 ms a fork). */
    uint64_t own = 2 * b->fork_ns + b->h.work_ns;
    if (b->head_got == sizeof(b->h) && own < age)
        age = own;
    return delay < age ? age - delay : 0;
}

void isolated_build_cancel(struct isolated_build *b)
{
    if (!b)
        return;
    close(b->fd);
    kill(b->pid, SIGKILL);       /* gone already, or out of time */
    while (waitpid(b->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    free(b->rows);
    free(b);
}

/* Reads into BUF up to WANT bytes, *GOT of them in already: true once all
 * are in; false with *ERR set when the pipe ended or failed. */
static bool read_some(int fd, void *buf, size_t want, size_t *got, bool *err)
{
    while (*got < want) {
        ssize_t r = read(fd, (char *)buf + *got, want - *got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return false;
        if (r <= 0) {
            *err = true;
            return false;
        }
        *got += (size_t)r;
    }
    return true;
}

int isolated_build_poll(struct isolated_build *b, struct unwind_rows *out, uint64_t *cost_ns)
{
    bool err = false, done = false;
    if (read_some(b->fd, &b->h, sizeof(b->h), &b->head_got, &err)) {
        if (!b->rows && (!b->h.n || b->h.n > MAX_ROWS || !(b->rows = malloc(b->h.n * sizeof(*b->rows)))))
            err = true;
        else
            done = read_some(b->fd, b->rows, b->h.n * sizeof(*b->rows), &b->rows_got, &err);
    }
    if (!done && !err && isolated_build_age_ns(b) < CHILD_WALL_MS * 1000000ull)
        return 0;
    *cost_ns = build_cost_ns(b);
    memset(out, 0, sizeof(*out));
    if (done) {
        out->rows = b->rows;
        out->n = b->h.n;
        memcpy(out->build_id, b->h.build_id, sizeof(out->build_id));
        out->build_id[sizeof(out->build_id) - 1] = '\0';
        b->rows = NULL;
    }
    isolated_build_cancel(b);
    return done ? 1 : -1;
}
