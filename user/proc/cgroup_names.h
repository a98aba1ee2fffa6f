/* The cgroups of the run's processes, each path kept once for the whole
 * run with the container it stands for: rows, retired sites and groups
 * point at an entry and compare entries by address. Bounded: past
 * CGROUP_NAMES_MAX distinct paths (any user with a delegated subtree can
 * make cgroups by the thousand) every further one is the single entry
 * CGROUP_NAMES_OTHER, counted. */
#ifndef PT_CGROUP_NAMES_H
#define PT_CGROUP_NAMES_H
#include <stdint.h>

#define CGROUP_NAMES_MAX 4096
/* A path longer than this is cut, and marked so ("...") */
#define CGROUP_PATH_MAX 1024
#define CGROUP_NAMES_OTHER "[other cgroups]"

struct cgroup_name {
    const char *path;        /* the cgroup v2 path ("/..."), as cgroup.h reads it */
    const char *container;   /* its innermost container's id, or NULL */
};

struct cgroup_names;

struct cgroup_names *cgroup_names_new(void);
void cgroup_names_free(struct cgroup_names *cn);

/* The entry of PATH, added on first use; never NULL. */
const struct cgroup_name *cgroup_names_intern(struct cgroup_names *cn, const char *path);

/* The entry of process PID's cgroup, or NULL when it cannot be read (the
 * process has exited). */
const struct cgroup_name *cgroup_names_of_pid(struct cgroup_names *cn, int pid);

/* How many distinct paths there are, and how many were turned away. */
int cgroup_names_count(const struct cgroup_names *cn);
uint64_t cgroup_names_over(const struct cgroup_names *cn);

#endif
