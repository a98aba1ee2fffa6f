#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *shown_name(const char *path)
{
    return strcmp(path, "-") ? path : "standard output";
}

static int refuse(const char *path, const char *why)
{
    fprintf(stderr, "parktrace: cannot write %s: %s\n", shown_name(path), why);
    return -1;
}

void output_file_failed(const struct output_file *o, int err)
{
    refuse(o->path, strerror(err ? err : EIO));
}

static const char *last_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Follows the link LINK (an O_PATH descriptor of it, in directory AT) if
 * root or parktrace's own user made it: a link another user owns could
 * point anywhere (issue 39: `ln -s rootonly shared/rep` by nobody in a
 * sticky directory made root's -o shared/rep/report.txt write into
 * rootonly/). Returns the directory it leads to (O_PATH), or -1. */
static int walk(int at, const char *path, int depth);

static int follow(int at, int link, int depth)
{
    struct stat st;
    char target[4096];
    ssize_t n;
    if (depth > 40 || fstat(link, &st) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
        (n = readlinkat(link, "", target, sizeof(target) - 1)) <= 0) {
        errno = depth > 40 ? ELOOP : EPERM;
        return -1;
    }
    target[n] = '\0';
    return walk(at, target, depth + 1);
}

/* The directory PATH (relative to AT) as an O_PATH descriptor, resolved
 * one name at a time, no link followed unless follow() allows it. */
static int walk(int at, const char *path, int depth)
{
    int fd = openat(path[0] == '/' ? AT_FDCWD : at, path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    char *copy = strdup(path), *save = NULL;
    for (char *name = copy ? strtok_r(copy, "/", &save) : NULL; fd >= 0 && name; name = strtok_r(NULL, "/", &save)) {
        if (!strcmp(name, "."))
            continue;
        int next = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (next >= 0 && !fstat(next, &st) && S_ISLNK(st.st_mode)) {
            int to = follow(fd, next, depth);
            close(next);
            next = to;
        } else if (next >= 0 && !S_ISDIR(st.st_mode)) {
            close(next);
            next = -1;
            errno = ENOTDIR;
        }
        int err = errno;
        close(fd);
        errno = err;
        fd = next;
    }
    free(copy);
    if (!copy && fd >= 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* PATH's directory, opened once: every later step (the file, its
 * temporary twin, the rename) is relative to it, so nothing can swap a
 * link in along the way. */
static int open_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    char *dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    int fd = dir ? walk(AT_FDCWD, dir, 0) : -1;
    free(dir);
    return fd;
}

/* The trap of a shared /tmp: a file another user made there for root to
 * write into, or to be told what root writes. */
static bool foreign_in_sticky_dir(const struct output_file *o, const struct stat *st)
{
    struct stat dir;
    return st->st_uid != geteuid() && fstat(o->dir, &dir) == 0 && (dir.st_mode & S_ISVTX);
}

/* A link root made where only root can write (/dev/stdout, /dev/fd/N). */
static bool trusted_link(const struct output_file *o, const struct stat *st)
{
    struct stat dir;
    return st->st_uid == 0 && fstat(o->dir, &dir) == 0 && dir.st_uid == 0 && !(dir.st_mode & (S_IWGRP | S_IWOTH));
}

static int open_fd(struct output_file *o, int fd)
{
    if (!(o->f = fdopen(fd, "w"))) {
        int err = errno;
        close(fd);
        return refuse(o->path, strerror(err));
    }
    return 0;
}

/* A device, FIFO or socket, or the file behind a trusted link. O_NONBLOCK
 * so a FIFO without a reader fails instead of holding parktrace; a regular
 * file behind a link is appended to (/dev/stdout after a shell's >>). */
static int open_in_place(struct output_file *o, bool through_link)
{
    int flags = O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (through_link ? O_APPEND : O_NOFOLLOW);
    int fd = openat(o->dir, last_name(o->path), flags);
    struct stat st;
    if (fd < 0)
        return refuse(o->path, errno == ELOOP   ? "a symbolic link (not followed)"
                               : errno == ENXIO ? "a FIFO or socket with no reader"
                                                : strerror(errno));
    /* What was opened, not what was looked at before: either may change. */
    if (fstat(fd, &st) || (!through_link && (S_ISREG(st.st_mode) || foreign_in_sticky_dir(o, &st)))) {
        close(fd);
        return refuse(o->path, "changed while being opened");
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return open_fd(o, fd);
}

/* A new file of its own beside PATH, so that no existing file (another
 * user's, or a hard link to one) is ever written into. */
static int open_temporary(struct output_file *o)
{
    const char *name = last_name(o->path);
    size_t len = strlen(name) + 16;
    if (!(o->tmp = malloc(len)))
        return refuse(o->path, strerror(errno));
    /* The mode fopen would give. */
    mode_t mask = umask(0);
    umask(mask);
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        snprintf(o->tmp, len, ".%s.%06lx", name, (unsigned long)(random() & 0xffffff));
        fd = openat(o->dir, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666 & ~mask);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int err = errno;
        free(o->tmp);
        o->tmp = NULL;
        return refuse(o->path, strerror(err));
    }
    if (open_fd(o, fd)) {
        output_file_discard(o);
        return -1;
    }
    return 0;
}

/* O's file in its directory, opened as output_file_open says. */
static int open_named(struct output_file *o)
{
    const char *path = o->path;
    struct stat st;
    if (fstatat(o->dir, last_name(path), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode))
            return trusted_link(o, &st) ? open_in_place(o, true)
                                        : refuse(path, "a symbolic link (not followed)");
        if (foreign_in_sticky_dir(o, &st))
            return refuse(path, "another user's file in a sticky directory");
        if (!S_ISREG(st.st_mode))
            return open_in_place(o, false);
    } else if (errno != ENOENT) {
        return refuse(path, strerror(errno));
    }
    return open_temporary(o);
}

int output_file_open(struct output_file *o, const char *path)
{
    *o = (struct output_file){.path = path, .dir = -1};
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    if ((o->dir = open_dir_of(path)) < 0)
        return refuse(path, errno == EPERM ? "its directory is reached through another user's symbolic link"
                                           : strerror(errno));
    int rc = open_named(o);
    if (rc) {
        close(o->dir);
        o->dir = -1;
    }
    return rc;
}

int output_file_publish(struct output_file *o)
{
    struct stat st;
    int rc = 0;
    if (!o->tmp)
        return 0;
    /* Checked again: the directory may have changed during the run. */
    const char *name = last_name(o->path);
    if (fstatat(o->dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && foreign_in_sticky_dir(o, &st))
        rc = refuse(o->path, "another user's file in a sticky directory");
    else if (renameat(o->dir, o->tmp, o->dir, name))
        rc = refuse(o->path, strerror(errno));
    if (rc)
        unlinkat(o->dir, o->tmp, 0);
    free(o->tmp);
    o->tmp = NULL;
    return rc;
}

int output_file_close(struct output_file *o)
{
    if (!o->f)
        return 0;
    int failed = fflush(o->f) || ferror(o->f), err = errno;
    if (o->f != stdout && fclose(o->f) && !failed)
        failed = 1, err = errno;
    o->f = NULL;
    if (failed) {
        output_file_failed(o, err);
        output_file_discard(o);
        return -1;
    }
    int rc = output_file_publish(o);
    output_file_discard(o);     /* its directory's descriptor */
    return rc;
}

void output_file_discard(struct output_file *o)
{
    if (o->f && o->f != stdout)
        fclose(o->f);
    o->f = NULL;
    if (o->tmp) {
        unlinkat(o->dir, o->tmp, 0);
        free(o->tmp);
        o->tmp = NULL;
    }
    if (o->dir >= 0)
        close(o->dir);
    o->dir = -1;
}

bool output_file_same(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
        return false;   /* standard output takes the report, then the stacks */
    bool has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
    if (has_a && has_b)
        return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (has_a || has_b)
        return false;
    if (strcmp(last_name(a), last_name(b)))
        return false;
    int da = open_dir_of(a), db = open_dir_of(b);
    bool same = da >= 0 && db >= 0 ? !fstat(da, &sa) && !fstat(db, &sb) && sa.st_dev == sb.st_dev &&
                                         sa.st_ino == sb.st_ino
                                   : strcmp(a, b) == 0;
    if (da >= 0)
        close(da);
    if (db >= 0)
        close(db);
    return same;
}
