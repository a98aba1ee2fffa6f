#include "attach_userns.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* A map's line is "inside outside count"; the kernel allows 340 of them. */
#define MAP_LINES 340

/* ID (as we see it) as the namespace whose map file PATH is sees it. */
static int map_id(const char *path, unsigned id, unsigned *inside)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    unsigned in, out, count;
    int found = -1;
    for (int i = 0; i < MAP_LINES && found && fscanf(f, "%u %u %u", &in, &out, &count) == 3; i++)
        if (id >= out && id - out < count) {
            *inside = in + (id - out);
            found = 0;
        }
    fclose(f);
    if (found)
        errno = ENOENT;
    return found;
}

int userns_ids_of(int pid, uid_t host_uid, gid_t host_gid, struct userns_ids *ids)
{
    char path[64];
    struct stat mine, theirs;
    snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
    if (stat("/proc/self/ns/user", &mine) || stat(path, &theirs))
        return -1;
    ids->other = mine.st_ino != theirs.st_ino || mine.st_dev != theirs.st_dev;
    ids->root_is_root = !ids->other;
    ids->uid = host_uid;
    ids->gid = host_gid;
    if (!ids->other)
        return 0;
    unsigned u, g, root;
    snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
    ids->root_is_root = map_id(path, 0, &root) == 0 && root == 0;
    if (map_id(path, (unsigned)host_uid, &u))
        return -1;
    snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
    if (map_id(path, (unsigned)host_gid, &g))
        return -1;
    ids->uid = (uid_t)u;
    ids->gid = (gid_t)g;
    return 0;
}

/* The child's exit status when it could not become the JVM's user. */
#define NOT_ENTERED 255

int userns_connect(int pidfd, const struct userns_ids *ids, int s, const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    pid_t child = fork();
    if (child < 0)
        return -1;
    if (child == 0) {
        /* Single-threaded, as setns into a user namespace requires; only
         * system calls from here on. Supplementary groups may be denied
         * (setgroups "deny"): the listener looks at euid and egid only. */
        if (setns(pidfd, CLONE_NEWUSER) || setresgid(ids->gid, ids->gid, ids->gid))
            _exit(NOT_ENTERED);
        (void)!setgroups(0, NULL);
        if (setresuid(ids->uid, ids->uid, ids->uid))
            _exit(NOT_ENTERED);
        _exit(connect(s, (struct sockaddr *)&addr, sizeof(addr)) ? (errno & 0xff) : 0);
    }
    int status;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : NOT_ENTERED;
    if (code == 0)
        return 0;
    errno = code == NOT_ENTERED ? EPERM : code;
    return -1;
}
