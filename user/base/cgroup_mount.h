/* The cgroup v2 hierarchy as parktrace reaches it: where it is mounted, and
 * a cgroup's directory for the kernel's --cgroup filter. */
#ifndef PT_CGROUP_MOUNT_H
#define PT_CGROUP_MOUNT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The hierarchy's mount point (from /proc/self/mountinfo: the first
 * cgroup2 mount, /sys/fs/cgroup or, on hybrid machines,
 * /sys/fs/cgroup/unified) into OUT: false when there is none. */
bool cgroup_v2_mount(char *out, size_t len);

/* The same, read from MOUNTINFO (a mountinfo file's lines). */
bool cgroup_v2_mount_in(FILE *mountinfo, char *out, size_t len);

/* Directory PATH (a cgroup v2 path, "/..."), opened read-only under the
 * hierarchy's mount without following a link or leaving the mount: a
 * descriptor for the kernel's cgroup filter, or -1 with errno (ENODEV:
 * no cgroup v2 hierarchy). */
int cgroup_dir_open(const char *path);

#endif
