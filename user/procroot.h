/* Directories of another process as it sees them, safe against a hostile
 * file tree: a container's /tmp may be a symlink, and an absolute one would
 * point into parktrace's own root if followed through /proc/PID/root. */
#ifndef PT_PROCROOT_H
#define PT_PROCROOT_H

/* An O_PATH descriptor of directory PATH (absolute, as process PID sees it),
 * resolved inside PID's root: symlinks cannot leave it. -1 with errno set. */
int procroot_dir(int pid, const char *path);

#endif
