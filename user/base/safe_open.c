#include "safe_open.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/fsuid.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "deadline_open.h"

#define FUSE_SUPER_MAGIC 0x65735546
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#define USER_MOUNTS_OPEN_MS 250   /* a lookup through a user's mounts, at most */
#define USER_MOUNTS_STRIKES 2     /* lookups killed at that deadline before a user's mounts are refused */
#define USER_MOUNTS_OWNERS 64

/* MODE is used with O_CREAT only (openat2 refuses it otherwise). */
static int safe_openat2(int dirfd, const char *path, uint64_t flags, unsigned mode, uint64_t resolve)
{
    struct open_how how = {.flags = flags | O_CLOEXEC, .mode = flags & O_CREAT ? mode : 0, .resolve = resolve};
    int fd = -1;
    /* EAGAIN: a rename raced with the lookup; the kernel asks for a retry. */
    for (int tries = 0; tries < 3; tries++) {
        fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        if (fd >= 0 || errno != EAGAIN)
            break;
    }
    return fd;
}

/* Whether FD's filesystem may have a user's process behind it: FUSE (its
 * server can stall every call), and, among a user's mounts, an overlay (it
 * reaches its layers, a user's FUSE mount among them, with its mounter's
 * credentials, where FUSE would refuse root's own). */
static bool user_served(int fd, bool users_mounts)
{
    struct statfs sf;
    if (fstatfs(fd, &sf))
        return true;
    return sf.f_type == FUSE_SUPER_MAGIC || (users_mounts && sf.f_type == OVERLAYFS_SUPER_MAGIC);
}

static int open_checked(int dirfd, const char *path, uint64_t resolve, bool users_mounts)
{
    int p = safe_openat2(dirfd, path, O_PATH, 0, resolve);
    if (p < 0)
        return -1;
    struct stat st;
    int fd = -1, err = EINVAL;
    if (fstat(p, &st) == 0 && S_ISREG(st.st_mode) && !user_served(p, users_mounts)) {
        char self[32];
        snprintf(self, sizeof(self), "/proc/self/fd/%d", p);
        fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        err = errno;
    }
    close(p);
    errno = err;
    return fd;
}

int safe_open_at(int dirfd, const char *path, uint64_t resolve)
{
    return open_checked(dirfd, path, resolve, false);
}

int safe_open(const char *path)
{
    return safe_open_at(AT_FDCWD, path, RESOLVE_NO_MAGICLINKS);
}

/* parktrace's own user namespace (its inode), read once: the process's. */
static ino_t own;

/* Whether PID's mounts may be a user's, and then the uid that owns them
 * (*OWNER): its mount namespace is owned by a user namespace other than
 * parktrace's own, whose creator can mount there (an overlay over their
 * own FUSE mount, say). Told from the namespaces alone, no mount touched;
 * when it cannot be told, it is taken as a user's of unknown uid. */
static bool mounts_of_a_user(int pid, uid_t *owner)
{
    if (!own) {
        struct stat st;
        if (stat("/proc/self/ns/user", &st) == 0)
            own = st.st_ino;
    }
    char path[40];
    snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
    int mnt = open(path, O_RDONLY | O_CLOEXEC);
    int user = mnt >= 0 ? ioctl(mnt, NS_GET_USERNS) : -1;
    struct stat st;
    bool ours = user >= 0 && own && fstat(user, &st) == 0 && st.st_ino == own;
    *owner = (uid_t)-1;
    if (!ours && user >= 0 && ioctl(user, NS_GET_OWNER_UID, owner) < 0)
        *owner = (uid_t)-1;
    if (user >= 0)
        close(user);
    if (mnt >= 0)
        close(mnt);
    return !ours;
}

/* Lookups through each user's mounts that were killed at their deadline. */
static struct strike {
    uid_t uid;
    unsigned n;
} strikes[USER_MOUNTS_OWNERS];
static unsigned strikes_next;

static struct strike *strike_of(uid_t uid, bool add)
{
    for (unsigned i = 0; i < USER_MOUNTS_OWNERS; i++)
        if (strikes[i].n && strikes[i].uid == uid)
            return &strikes[i];
    if (!add)
        return NULL;
    struct strike *s = &strikes[strikes_next++ % USER_MOUNTS_OWNERS];
    *s = (struct strike){.uid = uid};
    return s;
}

/* PATH below ROOT. Among a user's mounts (USERS_MOUNTS) no overlay is
 * kept either: what is done with the descriptor later must not reach the
 * user's processes, and only this lookup runs under a deadline. */
static int open_below(int root, const char *path, bool dir, bool users_mounts)
{
    /* Resolved as if ROOT were "/"; no /proc magic links back out. */
    const uint64_t resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    if (!dir)
        return open_checked(root, path, resolve, users_mounts);
    int fd = safe_openat2(root, *path ? path : ".", O_PATH | O_DIRECTORY, 0, resolve);
    if (fd >= 0 && users_mounts && user_served(fd, true)) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

struct open_in_root {
    int root;
    bool dir;
    char path[PATH_MAX];
};

/* Run in deadline_open's child: system calls only. */
static int open_below_call(void *arg)
{
    struct open_in_root *o = arg;
    return open_below(o->root, o->path, o->dir, true);
}

/* open_below through mounts that user OWNER may have made: in a child
 * killed at the deadline, since a user's FUSE server under an overlay can
 * hold a lookup for good (an overlay reads its layers with its mounter's
 * credentials, so FUSE's refusal of other users does not apply). A user
 * whose lookups were killed USER_MOUNTS_STRIKES times is refused (EPERM). */
static int open_below_user_mounts(int root, const char *path, bool dir, uid_t owner)
{
    struct strike *s = strike_of(owner, false);
    if (s && s->n >= USER_MOUNTS_STRIKES) {
        errno = EPERM;
        return -1;
    }
    struct open_in_root o = {.root = root, .dir = dir};
    size_t n = strlen(path);
    if (n >= sizeof(o.path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(o.path, path, n + 1);
    int fd = deadline_open(open_below_call, &o, sizeof(o), root, USER_MOUNTS_OPEN_MS);
    if (fd < 0 && errno == ETIMEDOUT)
        strike_of(owner, true)->n++;
    return fd;
}

/* PATH as process PID sees it, resolved below its BASE (the /proc/PID/
 * link "root" or "cwd"): a directory (O_PATH) when DIR, else a regular
 * file opened as safe_open_at does. */
static int below(int pid, const char *base, const char *path, bool dir)
{
    char base_path[40];
    snprintf(base_path, sizeof(base_path), "/proc/%d/%s", pid, base);
    int root = open(base_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return -1;
    while (*path == '/')
        path++;
    uid_t owner;
    int fd = mounts_of_a_user(pid, &owner) ? open_below_user_mounts(root, path, dir, owner)
                                           : open_below(root, path, dir, false);
    int err = errno;
    close(root);
    errno = err;
    return fd;
}

int safe_open_in_root(int pid, const char *path)
{
    return pid > 0 ? below(pid, "root", path, false) : safe_open(path);
}

int safe_dir_in_root(int pid, const char *path)
{
    return below(pid, "root", path, true);
}

int safe_cwd_of(int pid)
{
    return below(pid, "cwd", ".", true);
}

int safe_openat_here(int dir, const char *name, int flags, unsigned mode)
{
    return safe_openat2(dir, name, (uint64_t)flags, mode, RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS);
}

int safe_create_here_as(int dir, const char *name, int flags, unsigned mode, uid_t uid, gid_t gid)
{
    int fd = safe_openat_here(dir, name, flags, mode);
    if (fd >= 0 || errno != EOVERFLOW)
        return fd;
    int old_gid = setfsgid(gid), old_uid = setfsuid(uid);
    fd = safe_openat_here(dir, name, flags, mode);
    int err = errno;
    setfsuid((uid_t)old_uid);
    setfsgid((gid_t)old_gid);
    errno = err;
    return fd;
}

int safe_lstat_here(int dir, const char *name, struct stat *st)
{
    int fd = safe_openat_here(dir, name, O_PATH | O_NOFOLLOW, 0);
    if (fd < 0)
        return -1;
    int rc = fstat(fd, st);
    int err = errno;
    close(fd);
    errno = err;
    return rc;
}
