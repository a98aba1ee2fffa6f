/* The run's cgroup paths (cgroup_names.h): one entry per path, compared by
 * address; the container id read once; a bound on how many and how long. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_names.h"
#include "check.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

int main(void)
{
    struct cgroup_names *cn = cgroup_names_new();
    const struct cgroup_name *a = cgroup_names_intern(cn, "/system.slice/docker-" ID ".scope");
    const struct cgroup_name *b = cgroup_names_intern(cn, "/system.slice/ssh.service");
    CHECK(a == cgroup_names_intern(cn, "/system.slice/docker-" ID ".scope"), "one path, one entry");
    CHECK(a != b && strcmp(b->path, "/system.slice/ssh.service") == 0 && !b->container, "another path, another");
    CHECK(a->container && strcmp(a->container, ID) == 0, "a container's scope names it: %s",
          a->container ? a->container : "none");

    /* A path over CGROUP_PATH_MAX is cut, marked, and still one entry. */
    char path[3000] = "/";
    memset(path + 1, 'x', sizeof(path) - 2);
    path[sizeof(path) - 1] = '\0';
    const struct cgroup_name *l = cgroup_names_intern(cn, path);
    CHECK(strlen(l->path) == CGROUP_PATH_MAX - 1 && strcmp(l->path + strlen(l->path) - 3, "...") == 0,
          "a long path is cut to %d bytes with a mark (got %zu)", CGROUP_PATH_MAX - 1, strlen(l->path));
    CHECK(l == cgroup_names_intern(cn, path), "a cut path is still one entry");
    path[2000] = 'y';   /* past the cut: another path */
    CHECK(l != cgroup_names_intern(cn, path), "two long paths alike up to the cut are two entries");

    /* The bound: past CGROUP_NAMES_MAX, one shared entry, counted. */
    for (int i = cgroup_names_count(cn); i < CGROUP_NAMES_MAX; i++) {
        char p[64];
        snprintf(p, sizeof(p), "/many/%d", i);
        cgroup_names_intern(cn, p);
    }
    const struct cgroup_name *o = cgroup_names_intern(cn, "/one/too/many");
    CHECK(cgroup_names_count(cn) == CGROUP_NAMES_MAX && strcmp(o->path, CGROUP_NAMES_OTHER) == 0 &&
              cgroup_names_over(cn) == 1,
          "past %d cgroups: %s, %llu over", CGROUP_NAMES_MAX, o->path, (unsigned long long)cgroup_names_over(cn));
    CHECK(a == cgroup_names_intern(cn, "/system.slice/docker-" ID ".scope"), "a known path is still found");
    /* Our own process's, read from /proc. */
    CHECK(cgroup_names_of_pid(cn, (int)getpid()) != NULL, "our own cgroup is read");
    cgroup_names_free(cn);
    return CHECK_DONE();
}
