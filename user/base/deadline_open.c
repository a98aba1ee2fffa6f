#include "deadline_open.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "monotonic.h"

#define CHILD_STACK (64 * 1024)
#define PAGE 4096
/* A killed child's time to die. One whose FUSE request its server has
 * read already does not die (the kernel waits for the answer, unkillably)
 * until the server answers or goes: it keeps its memory, and with it
 * parktrace's address space after parktrace exits, but no descriptor. */
#define REAP_MS 100
#define MAX_STUCK 8     /* past it, no more children */

struct call {
    int (*open)(void *);
    int keep, sock;
    char arg[];
};

static unsigned long killed, stuck;

/* Closes every descriptor of the child's but A and B. */
static void close_all_but(int a, int b)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;
    if (lo > 0)
        syscall(SYS_close_range, 0, lo - 1, 0);
    if (hi > lo + 1)
        syscall(SYS_close_range, lo + 1, hi - 1, 0);
    syscall(SYS_close_range, hi + 1, ~0U, 0);
}

/* Sends FD (or, when it is -1, ERR) over SOCK. */
static void send_result(int sock, int fd, int err)
{
    char buf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(buf, 0, sizeof(buf));
        msg.msg_control = buf;
        msg.msg_controllen = sizeof(buf);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    sendmsg(sock, &msg, MSG_NOSIGNAL);
}

static int child_main(void *p)
{
    struct call *c = p;
    close_all_but(c->keep, c->sock);
    int fd = c->open(c->arg);
    send_result(c->sock, fd, fd < 0 ? errno : 0);
    return 0;
}

/* The descriptor the child sent on SOCK, or -1 with its errno. */
static int receive_result(int sock)
{
    char buf[CMSG_SPACE(sizeof(int))];
    int err = EIO;
    struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof(buf)};
    ssize_t n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    struct cmsghdr *c = n == (ssize_t)sizeof(err) ? CMSG_FIRSTHDR(&msg) : NULL;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
        int fd;
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
        return fd;
    }
    errno = n == (ssize_t)sizeof(err) && err ? err : EIO;
    return -1;
}

/* Waits for PIDFD to exit for at most MS; whether it did. */
static bool exited_within(int pidfd, int ms)
{
    uint64_t end = monotonic_ns() + (uint64_t)ms * 1000000;
    for (;;) {
        uint64_t now = monotonic_ns();
        int left = now >= end ? 0 : (int)((end - now + 999999) / 1000000);
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int r = poll(&p, 1, left);
        if (r > 0)
            return true;
        if (r == 0 || errno != EINTR)
            return false;
    }
}

int deadline_open(int (*open)(void *), void *arg, unsigned long arg_size, int keep, int timeout_ms)
{
    if (stuck >= MAX_STUCK) {
        errno = EBUSY;
        return -1;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    size_t size = PAGE + CHILD_STACK + ((sizeof(struct call) + arg_size + PAGE - 1) / PAGE) * PAGE;
    char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        int err = errno;
        close(sv[0]);
        close(sv[1]);
        errno = err;
        return -1;
    }
    mprotect(mem, PAGE, PROT_NONE);     /* a guard below the stack */
    struct call *c = (struct call *)(mem + PAGE + CHILD_STACK);
    *c = (struct call){.open = open, .keep = keep, .sock = sv[1]};
    memcpy(c->arg, arg, arg_size);

    /* Every signal blocked in the child (it inherits the mask): a Ctrl-C
     * is parktrace's to handle, not a half-done lookup's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int pidfd = -1;
    int tid = clone(child_main, mem + PAGE + CHILD_STACK, CLONE_VM | CLONE_PIDFD | CLONE_UNTRACED, c, &pidfd);
    int err = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(sv[1]);
    if (tid < 0) {
        close(sv[0]);
        munmap(mem, size);
        errno = err;
        return -1;
    }

    bool in_time = exited_within(pidfd, timeout_ms);
    if (!in_time) {
        syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        killed++;
        if (!exited_within(pidfd, REAP_MS)) {
            /* Still running on MEM: it is the child's for good. */
            stuck++;
            close(pidfd);
            close(sv[0]);
            errno = ETIMEDOUT;
            return -1;
        }
    }
    siginfo_t si;
    while (waitid(P_PIDFD, pidfd, &si, WEXITED | __WALL) < 0 && errno == EINTR)
        ;
    close(pidfd);
    int fd = in_time ? receive_result(sv[0]) : -1;
    err = in_time ? errno : ETIMEDOUT;
    if (in_time)
        memcpy(arg, c->arg, arg_size);
    close(sv[0]);
    munmap(mem, size);
    errno = err;
    return fd;
}

unsigned long deadline_opens_killed(void)
{
    return killed;
}

unsigned long deadline_opens_stuck(void)
{
    return stuck;
}
