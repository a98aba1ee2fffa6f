/* Which cgroup a process is in, and the container that cgroup stands for:
 * the v2 path from /proc/PID/cgroup (the v1 name=systemd path where v2
 * says "/", as on hybrid machines), and the container id read from the
 * path shapes of Docker, containerd/CRI, CRI-O and Podman
 * (docs/contract/cli.md, "Containers"). */
#ifndef PT_CGROUP_H
#define PT_CGROUP_H
#include <stdbool.h>
#include <stddef.h>

#define CGROUP_ID_LEN 64

/* PID's cgroup path into OUT (LEN bytes): false when it has none or it
 * does not fit. */
bool cgroup_of_pid(int pid, char *out, size_t len);

/* The same from the text of a /proc/PID/cgroup file. */
bool cgroup_from_text(const char *text, char *out, size_t len);

/* Whether cgroup PATH is TOP or below it ("/" holds every cgroup). */
bool cgroup_path_under(const char *path, const char *top);

/* The id of the innermost container in cgroup path PATH into ID (65
 * bytes): false when the path names none. */
bool cgroup_container_id(const char *path, char id[CGROUP_ID_LEN + 1]);

#endif
