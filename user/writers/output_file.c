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

/* Where PATH's last name lives: "dir/name" gives "dir", "name" gives ".". */
static int stat_dir_of(const char *path, struct stat *st)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return stat(".", st);
    if (slash == path)
        return stat("/", st);
    char *dir = strndup(path, (size_t)(slash - path));
    int rc = dir ? stat(dir, st) : -1;
    free(dir);
    return rc;
}

static const char *last_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The trap of a shared /tmp: a file another user made there for root to
 * write into, or to be told what root writes. */
static bool foreign_in_sticky_dir(const char *path, const struct stat *st)
{
    struct stat dir;
    return st->st_uid != geteuid() && stat_dir_of(path, &dir) == 0 && (dir.st_mode & S_ISVTX);
}

/* A link root made where only root can write (/dev/stdout, /dev/fd/N). */
static bool trusted_link(const char *path, const struct stat *st)
{
    struct stat dir;
    return st->st_uid == 0 && stat_dir_of(path, &dir) == 0 && dir.st_uid == 0 &&
           !(dir.st_mode & (S_IWGRP | S_IWOTH));
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
    int fd = open(o->path, flags);
    struct stat st;
    if (fd < 0)
        return refuse(o->path, errno == ELOOP   ? "a symbolic link (not followed)"
                               : errno == ENXIO ? "a FIFO or socket with no reader"
                                                : strerror(errno));
    /* What was opened, not what was looked at before: either may change. */
    if (fstat(fd, &st) || (!through_link && (S_ISREG(st.st_mode) || foreign_in_sticky_dir(o->path, &st)))) {
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
    size_t len = strlen(o->path) + 16;
    if (!(o->tmp = malloc(len)))
        return refuse(o->path, strerror(errno));
    snprintf(o->tmp, len, "%.*s.%s.XXXXXX", (int)(name - o->path), o->path, name);
    int fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        free(o->tmp);
        o->tmp = NULL;
        return refuse(o->path, strerror(err));
    }
    /* The mode fopen would give, not mkostemp's 0600. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask)) {
        refuse(o->path, strerror(errno));
        close(fd);
        fd = -1;
    }
    if (fd < 0 || open_fd(o, fd)) {
        output_file_discard(o);
        return -1;
    }
    return 0;
}

int output_file_open(struct output_file *o, const char *path)
{
    struct stat st;
    *o = (struct output_file){.path = path};
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return trusted_link(path, &st) ? open_in_place(o, true)
                                           : refuse(path, "a symbolic link (not followed)");
        if (foreign_in_sticky_dir(path, &st))
            return refuse(path, "another user's file in a sticky directory");
        if (!S_ISREG(st.st_mode))
            return open_in_place(o, false);
    } else if (errno != ENOENT) {
        return refuse(path, strerror(errno));
    }
    return open_temporary(o);
}

int output_file_publish(struct output_file *o)
{
    struct stat st;
    int rc = 0;
    if (!o->tmp)
        return 0;
    /* Checked again: the directory may have changed during the run. */
    if (lstat(o->path, &st) == 0 && foreign_in_sticky_dir(o->path, &st))
        rc = refuse(o->path, "another user's file in a sticky directory");
    else if (rename(o->tmp, o->path))
        rc = refuse(o->path, strerror(errno));
    if (rc)
        unlink(o->tmp);
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
    return output_file_publish(o);
}

void output_file_discard(struct output_file *o)
{
    if (o->f && o->f != stdout)
        fclose(o->f);
    o->f = NULL;
    if (o->tmp) {
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
    }
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
    if (stat_dir_of(a, &sa) || stat_dir_of(b, &sb))
        return strcmp(a, b) == 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
