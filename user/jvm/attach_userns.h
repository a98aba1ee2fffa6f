/* Attaching to a JVM in a user namespace of its own (a rootless container):
 * its attach listener accepts a peer with its own euid and egid, or root,
 * as it sees them, and root outside its namespace is neither there. The
 * connection is made by a child that has entered the JVM's user namespace
 * and taken its ids: the listener records the credentials of the process
 * that connects, and the parent keeps the socket. */
#ifndef PT_ATTACH_USERNS_H
#define PT_ATTACH_USERNS_H
#include <stdbool.h>
#include <sys/types.h>

struct userns_ids {
    bool other;     /* the JVM is in a user namespace other than ours */
    bool root_is_root;   /* our root is root there too (its files count as root's) */
    uid_t uid;      /* its euid and egid inside it */
    gid_t gid;
};

/* Whether process PID is in another user namespace, and its host euid
 * HOST_UID and egid HOST_GID as it sees them there. 0, or -1 with errno. */
int userns_ids_of(int pid, uid_t host_uid, gid_t host_gid, struct userns_ids *ids);

/* Connects socket S to the socket file PATH from inside the user namespace
 * of the process PIDFD refers to, as IDS: 0, or -1 with errno (connect's,
 * or EPERM when the namespace could not be entered). */
int userns_connect(int pidfd, const struct userns_ids *ids, int s, const char *path);

#endif
