/* The attach protocol against a real JVM (Compiler.perfmap, then its perf
 * map), against fake JVMs this test plays (exact request bytes, a JVM that
 * dies mid-command or never answers), and against files planted where the
 * socket should be. SIGPIPE and SIGQUIT keep their default actions here, so
 * a stray one kills the test. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "jvm_attach.h"
#include "perfmap.h"
#include "procstatus.h"

#define NOBODY 65534

static const char *const perfmap_cmd[3] = {"jcmd", "Compiler.perfmap", NULL};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool exists(const char *fmt, int pid)
{
    char path[96];
    snprintf(path, sizeof(path), fmt, pid);
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Reaps CHILD, killing it if it has not exited within SECONDS. */
static int reap(pid_t child, double seconds)
{
    int status = -1;
    for (double end = now() + seconds; waitpid(child, &status, WNOHANG) == 0;) {
        if (now() > end) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            break;
        }
        usleep(10000);
    }
    return status;
}

/* The class directory, build/java, found from this binary's own path
 * (build/tests/test_jvm_attach) so that any clone works from any cwd. */
static void class_dir(const char *argv0, char *dir, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) {
        snprintf(self, sizeof(self), "%s", argv0);
        n = (ssize_t)strlen(self);
    }
    self[n] = '\0';
    snprintf(dir, len, "%s/../java", dirname(self));
}

struct jvm_child {
    pid_t pid;
    int in, out;
};

static bool start_jvm(const char *dir, struct jvm_child *j)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out))
        return false;
    j->pid = fork();
    if (j->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execlp("java", "java", "-Xmx64m", "-cp", dir, "ParkedThreads", "2", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    j->in = in[1];
    j->out = out[0];
    char line[64] = "";
    ssize_t n = 0;
    /* "ready PID\n", read a byte at a time so nothing after it is taken. */
    for (size_t i = 0; i + 1 < sizeof(line) && (n = read(j->out, line + i, 1)) == 1 && line[i] != '\n'; i++)
        line[i + 1] = '\0';
    int pid = 0;
    return sscanf(line, "ready %d", &pid) == 1 && pid == j->pid;
}

/* Ends the JVM and returns what it printed after "ready" (malloc'd). */
static char *stop_jvm(struct jvm_child *j)
{
    close(j->in);
    reap(j->pid, 10);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    int flags = fcntl(j->out, F_GETFL);
    fcntl(j->out, F_SETFL, flags | O_NONBLOCK);
    for (ssize_t r; n + 1 < cap && (r = read(j->out, buf + n, cap - 1 - n)) > 0;)
        n += (size_t)r;
    buf[n] = '\0';
    close(j->out);
    return buf;
}

static void check_real_jvm(const char *dir)
{
    struct jvm_child j = {0};
    bool up = start_jvm(dir, &j);
    if (!REQUIRE(up, "starts ParkedThreads from %s (pid %d)", dir, j.pid)) {
        if (j.pid > 0) {
            kill(j.pid, SIGKILL);
            reap(j.pid, 1);
        }
        return;
    }
    CHECK(!exists("/tmp/.java_pid%d", j.pid), "a fresh JVM has no attach socket yet");

    char out[4096], err[256];
    double t0 = now();
    int rc = jvm_attach_command(j.pid, perfmap_cmd, out, sizeof(out), 5000, err, sizeof(err));
    double first = now() - t0;
    CHECK(rc == 0, "Compiler.perfmap succeeds (rc %d, %s) in %.3f s", rc, rc ? err : "ok", first);
    CHECK(exists("/tmp/.java_pid%d", j.pid), "the JVM opened its attach socket");
    /* The JVM runs in this test's working directory. */
    CHECK(!exists(".attach_pid%d", j.pid) && !exists("/tmp/.attach_pid%d", j.pid), "the trigger file is gone");

    struct perfmap pm;
    rc = perfmap_load(&pm, j.pid, err, sizeof(err));
    CHECK(rc == 0 && pm.n > 50, "the JVM's perf map loads (%d entries, %s)", pm.n, rc ? err : "ok");
    int java = 0, stubs = 0, found = 0;
    char name[PERFMAP_NAME_MAX], example[PERFMAP_NAME_MAX] = "";
    for (int i = 0; i < pm.n; i++) {
        perfmap_java_name(pm.e[i].name, name, sizeof(name));
        if (name[0] == '[') {
            stubs++;
        } else if (strchr(name, '.') && !strchr(name, '(') && !strchr(name, ' ')) {
            java++;
            snprintf(example, sizeof(example), "%s", name);
        }
        found += perfmap_find(&pm, pm.e[i].start + (pm.e[i].end - pm.e[i].start) / 2) == &pm.e[i];
    }
    CHECK(java > 10, "%d entries are Java methods (e.g. %s)", java, example);
    CHECK(stubs > 0, "%d entries are stubs, in brackets", stubs);
    CHECK(found == pm.n, "every entry is found from a pc in its middle (%d of %d)", found, pm.n);
    perfmap_free(&pm);

    struct stat before, after;
    char path[64];
    snprintf(path, sizeof(path), "/tmp/.java_pid%d", j.pid);
    stat(path, &before);
    static const char *const version[3] = {"jcmd", "VM.version", NULL};
    t0 = now();
    rc = jvm_attach_command(j.pid, version, out, sizeof(out), 5000, err, sizeof(err));
    double second = now() - t0;
    stat(path, &after);
    CHECK(rc == 0 && strstr(out, "JDK 17"), "a second command works (%s)", rc ? err : strtok(out, "\n"));
    CHECK(before.st_ino == after.st_ino && second < 2, "it reuses the socket (%.3f s)", second);

    static const char *const unknown[3] = {"jcmd", "No.such.command", NULL};
    rc = jvm_attach_command(j.pid, unknown, out, sizeof(out), 5000, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "Unknown diagnostic command"), "a command the JVM rejects: %s", err);
    static const char *const badop[3] = {"nosuchop", NULL, NULL};
    rc = jvm_attach_command(j.pid, badop, out, sizeof(out), 5000, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "not recognized"), "an operation the JVM does not know: %s", err);

    char small[8];
    rc = jvm_attach_command(j.pid, version, small, sizeof(small), 5000, err, sizeof(err));
    CHECK(rc == 0 && strlen(small) == 7, "output is cut to the buffer (%s)", small);
    rc = jvm_attach_command(j.pid, version, NULL, 0, 5000, NULL, 0);
    CHECK(rc == 0, "no output buffer, no error buffer");

    char *printed = stop_jvm(&j);
    CHECK(!strstr(printed, "Full thread dump"), "the JVM printed no thread dump (no stray SIGQUIT)");
    free(printed);
    snprintf(path, sizeof(path), "/tmp/perf-%d.map", j.pid);
    CHECK(unlink(path) == 0, "removes the JVM's perf map");
    snprintf(path, sizeof(path), "/tmp/.java_pid%d", j.pid);
    unlink(path);   /* the JVM removes it at exit; a killed one does not */

    t0 = now();
    rc = jvm_attach_command(j.pid, perfmap_cmd, out, sizeof(out), 5000, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "no process") && now() - t0 < 1, "a JVM that is gone: %s", err);
}

/* The process whose parent is PARENT, 0 if none. */
static int child_of(int parent)
{
    DIR *d = opendir("/proc");
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        char path[300], line[128];
        snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
        FILE *f = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? fopen(path, "r") : NULL;
        int ppid = -1;
        while (f && fgets(line, sizeof(line), f) && sscanf(line, "PPid: %d", &ppid) != 1)
            ;
        if (f)
            fclose(f);
        if (ppid == parent)
            found = atoi(e->d_name);
    }
    if (d)
        closedir(d);
    return found;
}

/* Pid 1 of a new pid namespace: a private /tmp, then the JVM as pid 2 with
 * /proc as its working directory, where no trigger file can go. */
static void container_init(const char *dir, int in, int out)
{
    /* Held open, the class directory stays reachable if it is under /tmp. */
    int classes = open(dir, O_PATH | O_DIRECTORY);
    char cp[64];
    snprintf(cp, sizeof(cp), "/proc/self/fd/%d", classes);
    if (classes < 0 || unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
        mount("none", "/tmp", "tmpfs", 0, NULL))
        _exit(3);
    pid_t java = fork();
    if (java == 0) {
        dup2(in, 0);
        dup2(out, 1);
        if (chdir("/proc") == 0)
            execlp("java", "java", "-Xmx64m", "-cp", cp, "ParkedThreads", "2", (char *)NULL);
        _exit(127);
    }
    close(in);
    close(out);
    waitpid(java, NULL, 0);
    _exit(0);
}

/* As in a container: the JVM knows itself by another pid and has its own /tmp. */
static void check_container_jvm(const char *dir)
{
    int in[2], out[2], report[2];
    if (!REQUIRE(pipe(in) == 0 && pipe(out) == 0 && pipe(report) == 0, "makes pipes"))
        return;
    pid_t helper = fork();
    if (helper == 0) {
        /* Only the JVM may hold its stdin: it exits when the test closes it. */
        close(in[1]);
        close(out[0]);
        close(report[0]);
        if (unshare(CLONE_NEWPID))
            _exit(2);
        pid_t init = fork();
        if (init == 0)
            container_init(dir, in[0], out[1]);
        (void)!write(report[1], &init, sizeof(init));
        waitpid(init, NULL, 0);
        _exit(0);
    }
    close(in[0]);
    close(out[1]);
    close(report[1]);
    pid_t init = 0;
    int nspid = 0;
    FILE *jvm_out = fdopen(out[0], "r");
    bool up = read(report[0], &init, sizeof(init)) == sizeof(init) && init > 0 &&
              fscanf(jvm_out, "ready %d", &nspid) == 1;
    int pid = up ? child_of(init) : 0;
    CHECK(up && pid > 0 && nspid == 2, "a JVM in new pid and mount namespaces (pid %d, %d inside)", pid, nspid);
    if (pid > 0) {
        char out_buf[256], err[256];
        int rc = jvm_attach_command(pid, perfmap_cmd, out_buf, sizeof(out_buf), 5000, err, sizeof(err));
        CHECK(rc == 0, "Compiler.perfmap in the namespaced JVM (%s)", rc ? err : "ok");
        CHECK(exists("/proc/%d/root/tmp/.java_pid2", pid) && !exists("/tmp/.java_pid2", 0),
              "its socket is /tmp/.java_pid2 in its own /tmp, not in ours");
        CHECK(!exists("/proc/%d/root/tmp/.attach_pid2", pid), "its trigger file, in its /tmp, is gone");
        struct perfmap pm;
        rc = perfmap_load(&pm, pid, err, sizeof(err));
        CHECK(rc == 0 && pm.n > 50, "its perf map loads from its own /tmp (%d entries, %s)", pm.n,
              rc ? err : "ok");
        perfmap_free(&pm);
    }
    close(in[1]);   /* the JVM exits, its namespaces and /tmp with it */
    char rest[4096];
    size_t n = fread(rest, 1, sizeof(rest) - 1, jvm_out);
    rest[n] = '\0';
    CHECK(!strstr(rest, "Full thread dump"), "the namespaced JVM printed no thread dump");
    fclose(jvm_out);
    close(report[0]);
    reap(helper, 10);
}

/* Children that play a process: they report ready on a pipe, then wait. */
enum role { SLEEPER, QUIT_COUNTER, QUIT_EXITS, BACKLOG_FULL, ECHO, CLOSE_AFTER_READ, CLOSE_AT_ONCE, HANG, GARBAGE };

static volatile sig_atomic_t quits;
static void on_quit(int sig)
{
    (void)sig;
    quits++;
}

static void exit_now(int sig)
{
    _exit(sig);
}

static void play(enum role role, int ready)
{
    if (role == QUIT_EXITS)
        signal(SIGQUIT, exit_now);
    if (role == QUIT_COUNTER) {
        signal(SIGQUIT, on_quit);
        char c = 'r';
        (void)!write(ready, &c, 1);
        /* The parent closes our stdin when it is done; report the count then. */
        while (read(0, &c, 1) > 0)
            ;
        c = (char)quits;
        (void)!write(ready, &c, 1);
        _exit(0);
    }
    int l = -1;
    if (role != SLEEPER && role != QUIT_EXITS) {
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        snprintf(addr.sun_path, sizeof(addr.sun_path), "/tmp/.java_pid%d", getpid());
        unlink(addr.sun_path);
        l = socket(AF_UNIX, SOCK_STREAM, 0);
        if (bind(l, (struct sockaddr *)&addr, sizeof(addr)) || listen(l, role == BACKLOG_FULL ? 0 : 4))
            _exit(1);
    }
    char c = 'r';
    (void)!write(ready, &c, 1);
    for (;;) {
        if (role == SLEEPER || role == QUIT_EXITS || role == BACKLOG_FULL) {
            pause();
            continue;
        }
        int s = accept(l, NULL, NULL);
        char req[256];
        ssize_t n = 0;
        if (role == ECHO || role == CLOSE_AFTER_READ || role == GARBAGE)
            n = read(s, req, sizeof(req));
        if (role == CLOSE_AFTER_READ || role == CLOSE_AT_ONCE)
            _exit(0);   /* a JVM dying mid-command */
        if (role == HANG) {
            pause();
        } else if (role == GARBAGE) {
            (void)!write(s, "zz\nrest", 7);
        } else {
            for (ssize_t i = 0; i < n; i++)
                req[i] = req[i] ? req[i] : '|';
            (void)!write(s, "0\n", 2);
            (void)!write(s, req, n > 0 ? (size_t)n : 0);
        }
        close(s);
    }
}

struct actor {
    pid_t pid;
    int ready, in;
};

static struct actor spawn(enum role role)
{
    int p[2], in[2];
    struct actor a = {0};
    if (pipe(p) || pipe(in))
        return a;
    a.pid = fork();
    if (a.pid == 0) {
        close(p[0]);
        close(in[1]);
        dup2(in[0], 0);
        play(role, p[1]);
        _exit(0);
    }
    close(p[1]);
    close(in[0]);
    a.ready = p[0];
    a.in = in[1];
    char c;
    if (read(a.ready, &c, 1) != 1)
        a.pid = 0;
    return a;
}

static void finish(struct actor *a)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/.java_pid%d", a->pid);
    unlink(path);
    kill(a->pid, SIGKILL);
    reap(a->pid, 2);
    close(a->ready);
    close(a->in);
}

static void check_fake_jvms(void)
{
    char out[512], err[256];
    struct actor a = spawn(ECHO);
    int rc = jvm_attach_command(a.pid, perfmap_cmd, out, sizeof(out), 2000, err, sizeof(err));
    CHECK(rc == 0 && strcmp(out, "1|jcmd|Compiler.perfmap|||") == 0,
          "the request is version 1, the operation and exactly three arguments (%s)", rc ? err : out);
    static const char *const two[3] = {"load", "instrument", "false"};
    rc = jvm_attach_command(a.pid, two, out, sizeof(out), 2000, err, sizeof(err));
    CHECK(rc == 0 && strcmp(out, "1|load|instrument|false||") == 0, "two arguments, the third empty (%s)", out);
    finish(&a);

    static const struct { enum role role; const char *why, *what; } broken[] = {
        {CLOSE_AFTER_READ, "without replying", "a JVM that exits after reading the command"},
        {CLOSE_AT_ONCE, "", "a JVM that exits as the command is sent"},
        {GARBAGE, "malformed reply", "a reply without a result code"},
        {HANG, "timed out", "a JVM that never answers"},
    };
    for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
        a = spawn(broken[i].role);
        double t0 = now();
        rc = jvm_attach_command(a.pid, perfmap_cmd, out, sizeof(out), 500, err, sizeof(err));
        double s = now() - t0;
        CHECK(rc == -1 && strstr(err, broken[i].why) && err[0] && s < 1.5, "%s: -1 in %.3f s (%s)", broken[i].what,
              s, err);
        finish(&a);
    }
}

/* The number of SIGQUITs a QUIT_COUNTER actor caught; it exits then. */
static int quits_of(struct actor *a)
{
    char c = -1;
    close(a->in);
    a->in = -1;
    if (read(a->ready, &c, 1) != 1)
        c = -1;
    return c;
}

static struct timespec mtime_of(const char *path)
{
    struct stat st = {0};
    stat(path, &st);
    return st.st_mtim;
}

/* A pid that names another process than the one meant is never signalled,
 * and the trigger goes to the JVM's /tmp, not to its working directory (its
 * user may not be able to write there; root can). */
static void check_pid_reuse_and_trigger_place(void)
{
    char out[64], err[256], cwd[] = "/tmp/pt-attach-cwd-XXXXXX", back[PATH_MAX];
    if (!REQUIRE(mkdtemp(cwd) && getcwd(back, sizeof(back)) && chdir(cwd) == 0, "a working directory for the JVM"))
        return;
    struct actor a = spawn(QUIT_COUNTER);
    REQUIRE(chdir(back) == 0, "back to %s", back);
    uint64_t start = 0;
    CHECK(procstatus_start_time(a.pid, &start) == 0 && start > 0, "its start time: %llu", (unsigned long long)start);
    struct timespec before = mtime_of(cwd);

    int rc = jvm_attach_command_to(a.pid, start + 1, perfmap_cmd, out, sizeof(out), 300, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "no longer"), "a process started at another time is refused: %s", err);
    rc = jvm_attach_command_to(a.pid, start, perfmap_cmd, out, sizeof(out), 300, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "no attach socket"), "the process meant is signalled: %s", err);
    struct timespec after = mtime_of(cwd);
    CHECK(before.tv_sec == after.tv_sec && before.tv_nsec == after.tv_nsec,
          "nothing was created in its working directory");
    char trigger[64];
    snprintf(trigger, sizeof(trigger), "/tmp/.attach_pid%d", a.pid);
    CHECK(access(trigger, F_OK) != 0, "the trigger in /tmp was removed");
    int n = quits_of(&a);
    CHECK(n == 1, "one SIGQUIT, for the right start time only (%d)", n);
    reap(a.pid, 2);
    close(a.ready);
    rmdir(cwd);
}

/* A listener that never accepts, its backlog taken: retried, never signalled. */
static void check_busy(void)
{
    char out[64], err[256];
    struct actor a = spawn(BACKLOG_FULL);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "/tmp/.java_pid%d", a.pid);
    int first = socket(AF_UNIX, SOCK_STREAM, 0);
    if (REQUIRE(connect(first, (struct sockaddr *)&addr, sizeof(addr)) == 0, "takes the only place in the backlog")) {
        double t0 = now();
        int rc = jvm_attach_command(a.pid, perfmap_cmd, out, sizeof(out), 300, err, sizeof(err));
        double s = now() - t0;
        CHECK(rc == -1 && strstr(err, "busy") && s >= 0.29 && s < 1.3, "a full backlog: -1 after %.3f s (%s)", s,
              err);
        CHECK(waitpid(a.pid, NULL, WNOHANG) == 0, "the busy process was never signalled");
    }
    close(first);
    finish(&a);
}

static void check_planted_files(void)
{
    char out[64], err[256], path[64];
    struct actor a = spawn(SLEEPER);
    snprintf(path, sizeof(path), "/tmp/.java_pid%d", a.pid);

    int rc;
    if (REQUIRE(symlink("/tmp/.X11-unix/X0", path) == 0, "plants a symlink at %s", path)) {
        rc = jvm_attach_command(a.pid, perfmap_cmd, out, sizeof(out), 1000, err, sizeof(err));
        CHECK(rc == -1 && strstr(err, "symlink"), "a symlink is refused: %s", err);
        unlink(path);
    }

    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    close(fd);
    rc = jvm_attach_command(a.pid, perfmap_cmd, out, sizeof(out), 1000, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "not a socket"), "a regular file is refused: %s", err);
    unlink(path);

    /* A socket served by this test, not by the process named. */
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    if (REQUIRE(bind(l, (struct sockaddr *)&addr, sizeof(addr)) == 0 && listen(l, 4) == 0, "binds a socket there")) {
        rc = jvm_attach_command(a.pid, perfmap_cmd, out, sizeof(out), 1000, err, sizeof(err));
        CHECK(rc == -1 && strstr(err, "served by pid"), "a socket served by another process is refused: %s", err);
        close(l);
        rc = jvm_attach_command(a.pid, perfmap_cmd, out, sizeof(out), 1000, err, sizeof(err));
        CHECK(rc == -1 && strstr(err, "refuses connections"), "a stale socket nobody listens on: %s", err);
        if (REQUIRE(chown(path, NOBODY, NOBODY) == 0, "chowns it to nobody")) {
            rc = jvm_attach_command(a.pid, perfmap_cmd, out, sizeof(out), 1000, err, sizeof(err));
            CHECK(rc == -1 && strstr(err, "owned by uid 65534"), "a socket owned by another user is refused: %s",
                  err);
        }
    } else {
        close(l);
    }
    unlink(path);

    /* SIGQUIT's default action would have ended it. */
    CHECK(waitpid(a.pid, NULL, WNOHANG) == 0, "the process was never signalled");
    finish(&a);
}

static void check_not_jvms(void)
{
    char out[64], err[256];
    double t0 = now();
    int rc = jvm_attach_command(getpid(), perfmap_cmd, out, sizeof(out), 5000, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "SIGQUIT") && now() - t0 < 1, "a process that does not catch SIGQUIT is "
                                                                  "not signalled: %s", err);

    /* Catches SIGQUIT but opens no socket: one SIGQUIT, then the deadline. */
    struct actor a = spawn(QUIT_COUNTER);
    t0 = now();
    rc = jvm_attach_command(a.pid, perfmap_cmd, out, sizeof(out), 300, err, sizeof(err));
    double s = now() - t0;
    CHECK(rc == -1 && strstr(err, "in time") && s >= 0.29 && s < 1.3, "a process that never opens a socket: "
                                                                     "-1 after %.3f s (%s)", s, err);
    CHECK(!exists(".attach_pid%d", a.pid) && !exists("/tmp/.attach_pid%d", a.pid), "its trigger file is removed");
    close(a.in);
    char quits_seen = -1;
    CHECK(read(a.ready, &quits_seen, 1) == 1 && quits_seen == 1, "it got exactly one SIGQUIT (%d)", quits_seen);
    a.in = -1;
    finish(&a);

    /* A JVM that dies while it should be opening its socket. */
    a = spawn(QUIT_EXITS);
    t0 = now();
    rc = jvm_attach_command(a.pid, perfmap_cmd, out, sizeof(out), 3000, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "exited") && now() - t0 < 1, "a process that exits on SIGQUIT: -1 in %.3f s "
                                                                "(%s)", now() - t0, err);
    CHECK(!exists(".attach_pid%d", a.pid), "its trigger file is removed");
    finish(&a);

    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    rc = jvm_attach_command(gone, perfmap_cmd, out, sizeof(out), 5000, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "no process"), "a pid with no process: %s", err);
    rc = jvm_attach_command(-5, perfmap_cmd, out, sizeof(out), 5000, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "no process"), "a negative pid: %s", err);

    static const char *const none[3] = {NULL, NULL, NULL};
    static const char *const longname[3] = {"an-operation-name-too-long", NULL, NULL};
    CHECK(jvm_attach_command(getpid(), none, out, sizeof(out), 5000, err, sizeof(err)) == -1 && err[0],
          "no operation: %s", err);
    CHECK(jvm_attach_command(getpid(), longname, out, sizeof(out), 5000, err, sizeof(err)) == -1 && err[0],
          "an operation name longer than HotSpot's 16 characters: %s", err);
}

int main(int argc, char **argv)
{
    (void)argc;
    char dir[PATH_MAX + 16];
    class_dir(argv[0], dir, sizeof(dir));
    check_real_jvm(dir);
    check_container_jvm(dir);
    check_fake_jvms();
    check_planted_files();
    check_busy();
    check_pid_reuse_and_trigger_place();
    check_not_jvms();
    return CHECK_DONE();
}
