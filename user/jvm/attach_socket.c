#include "attach_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "attach_userns.h"
#include "procstatus.h"
#include "safe_open.h"

#define POLL_STEP_MS 10

struct target {
    int pid, pidfd, tmp;          /* tmp: O_PATH descriptor of the JVM's /tmp */
    uint64_t start_time;          /* the process meant, or 0 for any */
    struct procstatus ps;
    struct userns_ids ns;         /* its user namespace, and its ids there */
    char sock_name[32];           /* .java_pid<nspid> */
};

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int64_t attach_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int attach_left_ms(int64_t deadline)
{
    int64_t left = deadline - attach_now_ms();
    return left < 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

static bool exited(const struct target *t)
{
    struct pollfd p = {.fd = t->pidfd, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

/* How a try to connect failed. */
#define ABSENT -1    /* no socket: the listener has not been started */
#define BUSY -2      /* its backlog is full: try again */
#define GIVE_UP -3   /* ERR says why */

/* Whether a file of UID's may be taken for the JVM's or root's, as the
 * JVM sees it: in a user namespace that does not map our root, a file of
 * root's is nobody's. */
static bool owner_ok(const struct target *t, uid_t uid)
{
    return uid == t->ps.euid || (uid == 0 && t->ns.root_is_root);
}

/* Whether F (opened without following links) is the JVM's socket. */
static int check_socket(const struct target *t, int f, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(f, &st) != 0)
        fail(err, errlen, "/tmp/%s: %s", t->sock_name, strerror(errno));
    else if (!S_ISSOCK(st.st_mode))
        fail(err, errlen, "/tmp/%s is %s, not a socket: refusing it", t->sock_name,
             S_ISLNK(st.st_mode) ? "a symlink" : "another kind of file");
    else if (!owner_ok(t, st.st_uid))
        fail(err, errlen, "/tmp/%s is owned by uid %u, not by the JVM's uid %u or root: refusing it",
             t->sock_name, (unsigned)st.st_uid, (unsigned)t->ps.euid);
    else
        return 0;
    return GIVE_UP;
}

/* Connects S to the socket file F. */
static int connect_to(const struct target *t, int s, int f, char *err, size_t errlen)
{
    /* Through the descriptor, so the file checked is the file connected to. */
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d", f);
    /* A JVM in a user namespace of its own sees root outside as nobody:
     * connected from inside it, as the JVM's own user. */
    int rc = t->ns.other ? userns_connect(t->pidfd, &t->ns, s, addr.sun_path)
                         : connect(s, (struct sockaddr *)&addr, sizeof(addr));
    if (rc != 0) {
        if (t->ns.other && errno == EPERM) {
            fail(err, errlen, "JVM %d: cannot enter its user namespace to attach", t->pid);
            return GIVE_UP;
        }
        if (errno == EAGAIN)
            return BUSY;
        /* Refused: nobody listens. HotSpot removes a stale socket when it
         * starts and SIGQUIT would not replace this one: it would print a
         * thread dump. So no signal; jcmd fails here too. */
        if (errno == ECONNREFUSED)
            fail(err, errlen, "/tmp/%s refuses connections (a stale socket): not signalling the JVM", t->sock_name);
        else
            fail(err, errlen, "connecting to /tmp/%s: %s", t->sock_name, strerror(errno));
        return GIVE_UP;
    }
    /* The listener must be the JVM itself, not whoever bound the name. */
    struct ucred cred = {.pid = 0};
    socklen_t len = sizeof(cred);
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid != t->pid) {
        fail(err, errlen, "/tmp/%s is served by pid %d, not by the JVM: refusing it", t->sock_name, (int)cred.pid);
        return GIVE_UP;
    }
    return 0;
}

/* One try to connect to the JVM's socket: a connected descriptor, ABSENT,
 * BUSY or GIVE_UP. */
static int try_connect(const struct target *t, char *err, size_t errlen)
{
    int f = safe_openat_here(t->tmp, t->sock_name, O_PATH | O_NOFOLLOW, 0);
    if (f < 0) {
        if (errno == ENOENT)
            return ABSENT;
        fail(err, errlen, "/tmp/%s: %s", t->sock_name, strerror(errno));
        return GIVE_UP;
    }
    int rc = check_socket(t, f, err, errlen);
    int s = -1;
    if (rc == 0) {
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s < 0) {
            fail(err, errlen, "socket: %s", strerror(errno));
            rc = GIVE_UP;
        } else
            rc = connect_to(t, s, f, err, errlen);
    }
    close(f);
    if (rc == 0)
        return s;
    if (s >= 0)
        close(s);
    return rc;
}

/* The file that asks HotSpot to start its attach listener on SIGQUIT. */
struct trigger {
    int dir;        /* where it is, -1 for nowhere */
    bool ours;      /* created by this call, so removed by it */
    char name[32];  /* .attach_pid<nspid> */
};

/* Puts a trigger where HotSpot 17 looks for one (AttachListener::
 * is_init_trigger): its working directory first, then its /tmp; a file
 * counts only if its owner is the JVM's euid or root. One already in the
 * working directory is used (or, someone else's, makes the JVM ignore the
 * /tmp one: no signal then). Otherwise the trigger goes in the JVM's /tmp,
 * never in a working directory its user may not be able to write. */
static int trigger_create(struct trigger *tr, const struct target *t, char *err, size_t errlen)
{
    snprintf(tr->name, sizeof(tr->name), ".attach_pid%d", t->ps.nspid);
    int dir = safe_cwd_of(t->pid);
    struct stat st;
    /* HotSpot stat()s it, links followed; a link is taken as its own
     * owner's here (who else's file would it lead to?), and not followed. */
    if (dir >= 0 && safe_lstat_here(dir, tr->name, &st) == 0) {
        if (!owner_ok(t, st.st_uid)) {
            close(dir);
            return fail(err, errlen, "%s in the JVM's working directory is owned by uid %u: the JVM would "
                                     "ignore its trigger", tr->name, (unsigned)st.st_uid);
        }
        tr->dir = dir;
        return 0;
    }
    if (dir >= 0)
        close(dir);
    dir = dup(t->tmp);
    if (dir < 0)
        return fail(err, errlen, "dup: %s", strerror(errno));
    /* O_EXCL: never through a symlink planted under that name. */
    int fd = safe_create_here_as(dir, tr->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600, t->ps.euid,
                                 t->ps.egid);
    if (fd >= 0) {
        /* Root's file is nobody's in a user namespace that does not map
         * our root: the JVM's own (HotSpot printed a thread dump instead). */
        int owned = t->ns.root_is_root ? 0 : fchown(fd, t->ps.euid, t->ps.egid);
        close(fd);
        tr->ours = true;
        if (owned) {
            int saved = errno;
            unlinkat(dir, tr->name, 0);
            close(dir);
            return fail(err, errlen, "cannot give %s to the JVM's user: %s", tr->name, strerror(saved));
        }
    } else if (errno != EEXIST || safe_lstat_here(dir, tr->name, &st) != 0 || !owner_ok(t, st.st_uid)) {
        int saved = errno;
        close(dir);
        if (saved == EEXIST)
            return fail(err, errlen, "%s in the JVM's /tmp is not the JVM's or root's: the JVM would ignore it",
                        tr->name);
        return fail(err, errlen, "cannot create %s in the JVM's /tmp: %s", tr->name, strerror(saved));
    }
    tr->dir = dir;
    return 0;
}

static void trigger_remove(struct trigger *tr)
{
    if (tr->dir < 0)
        return;
    if (tr->ours)
        unlinkat(tr->dir, tr->name, 0);
    close(tr->dir);
    tr->dir = -1;
}

/* Tries to connect every few milliseconds while the socket is BUSY, or
 * ABSENT too if WAIT_ABSENT, until the deadline or the JVM's exit. */
static int keep_trying(const struct target *t, int64_t deadline, bool wait_absent, char *err, size_t errlen)
{
    for (;;) {
        int s = try_connect(t, err, errlen);
        if (s != BUSY && (s != ABSENT || !wait_absent))
            return s;
        int left = attach_left_ms(deadline);
        if (left == 0) {
            fail(err, errlen, s == BUSY ? "JVM %d: its attach socket /tmp/%s stayed busy"
                                        : "JVM %d opened no attach socket /tmp/%s in time",
                 t->pid, t->sock_name);
            return GIVE_UP;
        }
        /* The pidfd turns readable when the process exits. */
        struct pollfd p = {.fd = t->pidfd, .events = POLLIN};
        if (poll(&p, 1, left < POLL_STEP_MS ? left : POLL_STEP_MS) > 0) {
            fail(err, errlen, "process %d exited", t->pid);
            return GIVE_UP;
        }
    }
}

/* Makes the JVM open its socket, with the one SIGQUIT, and connects. */
static int start_listener(const struct target *t, int64_t deadline, char *err, size_t errlen)
{
    if (!(t->ps.sigcgt & (1ull << (SIGQUIT - 1))))
        return fail(err, errlen, "process %d does not catch SIGQUIT (not a JVM, started with -Xrs, or still "
                                 "starting): not signalling it", t->pid);
    if (attach_left_ms(deadline) == 0)
        return fail(err, errlen, "JVM %d has no attach socket yet and no time is left to wait for one", t->pid);
    struct trigger tr = {.dir = -1};
    if (trigger_create(&tr, t, err, errlen) != 0)
        return -1;
    int s = GIVE_UP;
    /* Through the pidfd: the process checked is the process signalled. */
    if (pidfd_send_signal(t->pidfd, SIGQUIT, NULL, 0) != 0)
        fail(err, errlen, "cannot signal process %d: %s", t->pid, strerror(errno));
    else
        s = keep_trying(t, deadline, true, err, errlen);
    trigger_remove(&tr);
    return s;
}

static int open_socket(struct target *t, int64_t deadline, char *err, size_t errlen)
{
    /* Read after the pidfd is opened, and checked against it: a pid reused
     * in between would show as the pidfd's process having exited. */
    uint64_t start;
    if (procstatus_read(t->pid, &t->ps) != 0 || exited(t))
        return fail(err, errlen, "no process with pid %d", t->pid);
    if (t->start_time && (procstatus_start_time(t->pid, &start) != 0 || start != t->start_time || exited(t)))
        return fail(err, errlen, "pid %d is no longer the JVM it was (it exited; the pid was reused)", t->pid);
    /* HotSpot accepts a peer only if it is root or has its euid and egid. */
    if (geteuid() != 0 && (geteuid() != t->ps.euid || getegid() != t->ps.egid))
        return fail(err, errlen, "JVM %d runs as uid %u gid %u: only root or that user can attach", t->pid,
                    (unsigned)t->ps.euid, (unsigned)t->ps.egid);
    if (userns_ids_of(t->pid, t->ps.euid, t->ps.egid, &t->ns) != 0)
        return fail(err, errlen, "JVM %d: cannot read its user namespace: %s", t->pid, strerror(errno));
    if (t->ns.other && geteuid() != 0)
        return fail(err, errlen, "JVM %d is in a user namespace of its own: only root can attach", t->pid);
    t->tmp = safe_dir_in_root(t->pid, "/tmp");
    if (t->tmp < 0)
        return fail(err, errlen, "JVM %d: cannot open its /tmp: %s", t->pid, strerror(errno));
    snprintf(t->sock_name, sizeof(t->sock_name), ".java_pid%d", t->ps.nspid);
    int s = keep_trying(t, deadline, false, err, errlen);
    if (s == ABSENT)
        s = start_listener(t, deadline, err, errlen);
    return s;
}

int attach_socket_open(int pid, uint64_t start_time, int64_t deadline, char *err, size_t errlen)
{
    struct target t = {.pid = pid, .tmp = -1, .start_time = start_time};
    t.pidfd = pid > 0 ? pidfd_open(pid, 0) : -1;
    if (t.pidfd < 0)
        return fail(err, errlen, "no process with pid %d", pid);
    int s = open_socket(&t, deadline, err, errlen);
    if (t.tmp >= 0)
        close(t.tmp);
    close(t.pidfd);
    return s >= 0 ? s : -1;
}
