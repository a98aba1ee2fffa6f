/* Opening files that another user may control, as root. A plain open() of
 * a FIFO blocks for good, and of a device acts on it (/dev/ptmx makes a
 * terminal); a link may lead anywhere. These open regular files only: the
 * path is resolved to an O_PATH descriptor first (which opens nothing), its
 * type checked, and only then the same inode reopened for reading. */
#ifndef PT_SAFE_OPEN_H
#define PT_SAFE_OPEN_H
#include <stdint.h>
#include <sys/stat.h>

/* A file a traced process maps, as parktrace reaches it. */
struct file_ref {
    int fd;                   /* a regular file, open read-only */
    const char *name;         /* the path the process knows it by */
    int pid;                  /* whose root NAME is resolved in; 0: parktrace's own */
};

/* PATH relative to DIRFD, resolved with openat2's RESOLVE flags, opened
 * read-only if it is a regular file that no user process serves (FUSE);
 * else -1 with errno set (EINVAL for the wrong kind of file). */
int safe_open_at(int dirfd, const char *path, uint64_t resolve);

/* An absolute path of parktrace's own: links followed, but no /proc magic
 * links (a process's fd or root). */
int safe_open(const char *path);

/* PATH as process PID sees it: resolved inside its root, so that a
 * container's absolute links stay in the container. */
int safe_open_in_root(int pid, const char *path);

/* An O_PATH descriptor of directory PATH (absolute, as process PID sees
 * it), resolved inside PID's root: a container's /tmp may be a symlink, and
 * an absolute one must not lead into parktrace's own root. -1 with errno. */
int safe_dir_in_root(int pid, const char *path);

/* The working directory of process PID as an O_PATH descriptor, with the
 * same care as safe_dir_in_root. -1 with errno. */
int safe_cwd_of(int pid);

/* NAME in DIR (a descriptor from safe_dir_in_root or safe_cwd_of), opened
 * with FLAGS (and MODE, with O_CREAT) without leaving DIR: no link
 * followed (ELOOP; with O_PATH | O_NOFOLLOW the link itself), no mount
 * crossed (EXDEV: a user's bind mount could put there a file whose every
 * call their process can stall). -1 with errno. */
int safe_openat_here(int dir, const char *name, int flags, unsigned mode);

/* NAME made in DIR as safe_openat_here makes it (FLAGS with O_CREAT |
 * O_EXCL). A filesystem a user namespace mounted (a rootless container's
 * tmpfs) takes no file whose owner it cannot map (EOVERFLOW), and root
 * has no mapping there: the file is then made as UID and GID (another
 * process's, whom it maps), this thread's fsuid for the one call. */
int safe_create_here_as(int dir, const char *name, int flags, unsigned mode, uid_t uid, gid_t gid);

/* lstat(2) of NAME in DIR, reached as safe_openat_here does. */
int safe_lstat_here(int dir, const char *name, struct stat *st);

#endif
