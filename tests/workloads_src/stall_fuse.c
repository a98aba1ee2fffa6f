/* A user's trap for a root parktrace (issue 39): an overlay over the user's
 * own FUSE mount, whose server never answers some lookups.
 *
 *   stall_fuse FUSEDEV DIR PROGRAM [ARGS...]
 *
 * Run as an unprivileged user, in DIR (theirs), with PROGRAM in it. In a
 * user and mount namespace of its own it mounts FUSE (FUSEDEV: /dev/fuse,
 * or a node of it) at DIR/t/lower, an overlay of a tmpfs upper layer over
 * it at DIR/t/merged, copies PROGRAM there and runs it from there. The
 * FUSE server answers every lookup with "no such file", except names
 * ending in ".debug", which it never answers: a debug file looked up next
 * to the program waits for good (FUSE refuses other users' lookups, but an
 * overlay looks its layers up with its mounter's credentials). It prints
 * "pid N" once the program runs and "stalled NAME" for each such lookup.
 * Exits when the program does; a lookup still waiting then fails. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int fuse_fd;

static void die(const char *what)
{
    fprintf(stderr, "stall_fuse: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        die(path);
    close(fd);
}

static void reply(uint64_t unique, int error, const void *out, size_t size)
{
    char buf[sizeof(struct fuse_out_header) + 256];
    struct fuse_out_header h = {.len = (uint32_t)(sizeof(h) + size), .error = error, .unique = unique};
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), out, size);
    if (write(fuse_fd, buf, h.len) < 0 && errno != ENOENT)  /* ENOENT: the request was interrupted */
        perror("stall_fuse: reply");
}

static bool stalls(const char *name)
{
    size_t n = strlen(name);
    return n >= 6 && strcmp(name + n - 6, ".debug") == 0;
}

static void *serve(void *unused)
{
    (void)unused;
    static char buf[1 << 20];
    for (;;) {
        ssize_t n = read(fuse_fd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == ENOENT))
            continue;
        if (n < (ssize_t)sizeof(struct fuse_in_header))
            return NULL;    /* unmounted */
        struct fuse_in_header *in = (struct fuse_in_header *)buf;
        const char *arg = buf + sizeof(*in);
        switch (in->opcode) {
        case FUSE_INIT: {
            const struct fuse_init_in *i = (const struct fuse_init_in *)arg;
            struct fuse_init_out o = {.major = FUSE_KERNEL_VERSION,
                                      .minor = i->minor < 31 ? i->minor : 31,
                                      .max_readahead = i->max_readahead,
                                      .max_write = 4096,
                                      .time_gran = 1};
            reply(in->unique, 0, &o, sizeof(o));
            break;
        }
        case FUSE_GETATTR: {
            struct fuse_attr_out o = {.attr = {.ino = in->nodeid, .mode = S_IFDIR | 0755, .nlink = 2}};
            reply(in->unique, 0, &o, sizeof(o));
            break;
        }
        case FUSE_STATFS: {    /* the overlay's mount asks */
            struct fuse_statfs_out o = {.st = {.bsize = 4096, .namelen = 255, .frsize = 4096}};
            reply(in->unique, 0, &o, sizeof(o));
            break;
        }
        case FUSE_LOOKUP:
            if (stalls(arg)) {
                printf("stalled %s\n", arg);
                fflush(stdout);
            } else {
                reply(in->unique, -ENOENT, NULL, 0);
            }
            break;
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
        case FUSE_INTERRUPT:
            break;      /* no reply: a stalled lookup stays stalled */
        default:
            reply(in->unique, -ENOSYS, NULL, 0);
        }
    }
}

static void copy(const char *from, const char *to)
{
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (in < 0 || out < 0)
        die(from);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n)
            die(to);
    close(in);
    close(out);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: stall_fuse FUSEDEV DIR PROGRAM [ARGS...]\n");
        return 2;
    }
    char dir[4096], ids[64], path[4200], opts[3 * 4096 + 128];
    if (!realpath(argv[2], dir))
        die(argv[2]);
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        die("unshare");
    write_file("/proc/self/setgroups", "deny");
    snprintf(ids, sizeof(ids), "0 %u 1", (unsigned)uid);
    write_file("/proc/self/uid_map", ids);
    snprintf(ids, sizeof(ids), "0 %u 1", (unsigned)gid);
    write_file("/proc/self/gid_map", ids);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        die("private /");

    snprintf(path, sizeof(path), "%s/t", dir);
    mkdir(path, 0755);
    if (mount("stall", path, "tmpfs", 0, "mode=0755") < 0)
        die("tmpfs");
    const char *subdirs[] = {"lower", "upper", "work", "merged"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/t/%s", dir, subdirs[i]);
        if (mkdir(path, 0755) < 0)
            die(path);
    }
    const char *base = strrchr(argv[3], '/') ? strrchr(argv[3], '/') + 1 : argv[3];
    snprintf(path, sizeof(path), "%s/t/upper/%s", dir, base);
    copy(argv[3], path);

    fuse_fd = open(argv[1], O_RDWR | O_CLOEXEC);
    if (fuse_fd < 0)
        die(argv[1]);
    snprintf(path, sizeof(path), "%s/t/lower", dir);
    snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse_fd);
    if (mount("stall", path, "fuse", MS_NOSUID | MS_NODEV, opts) < 0)
        die("fuse");
    pthread_t server;
    if (pthread_create(&server, NULL, serve, NULL))
        die("server thread");
    snprintf(opts, sizeof(opts), "lowerdir=%s/t/lower,upperdir=%s/t/upper,workdir=%s/t/work,userxattr", dir, dir,
             dir);
    snprintf(path, sizeof(path), "%s/t/merged", dir);
    if (mount("overlay", path, "overlay", 0, opts) < 0)
        die("overlay");

    snprintf(path, sizeof(path), "%s/t/merged/%s", dir, base);
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        argv[3] = path;
        execv(path, argv + 3);
        die(path);
    }
    printf("pid %d\n", (int)child);
    fflush(stdout);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
