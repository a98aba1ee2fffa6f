#include "cgroup_names.h"

#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "oom.h"
#include "str_hash.h"

/* Open addressing at most half full: a probe ends within a few slots. */
#define SLOTS (2 * CGROUP_NAMES_MAX)

struct entry {
    struct cgroup_name name;
    uint64_t hash;
    char container[CGROUP_ID_LEN + 1];
};

struct cgroup_names {
    struct entry *slots[SLOTS];
    int count;
    uint64_t over;
    struct entry other;
};

struct cgroup_names *cgroup_names_new(void)
{
    struct cgroup_names *cn = calloc(1, sizeof(*cn));
    if (cn)
        cn->other.name.path = CGROUP_NAMES_OTHER;
    return cn;
}

void cgroup_names_free(struct cgroup_names *cn)
{
    if (!cn)
        return;
    for (int i = 0; i < SLOTS; i++)
        if (cn->slots[i]) {
            free((char *)cn->slots[i]->name.path);
            free(cn->slots[i]);
        }
    free(cn);
}

/* PATH as kept: cut at CGROUP_PATH_MAX with a mark, so that a cut path
 * never passes for a real one. */
static char *kept_path(const char *path)
{
    size_t n = strlen(path);
    size_t keep = n < CGROUP_PATH_MAX ? n : CGROUP_PATH_MAX - 4;
    char *p = malloc(keep + 4);
    if (!p)
        out_of_memory("cgroup names");
    memcpy(p, path, keep);
    strcpy(p + keep, n == keep ? "" : "...");
    return p;
}

const struct cgroup_name *cgroup_names_intern(struct cgroup_names *cn, const char *path)
{
    uint64_t h = str_hash(path);
    size_t n = strlen(path);
    unsigned i = (unsigned)(h % SLOTS);
    for (; cn->slots[i]; i = (i + 1) % SLOTS) {
        const struct entry *e = cn->slots[i];
        /* A cut path matches only the same long path's first bytes: the
         * hash of the whole decides. */
        if (e->hash == h && strncmp(e->name.path, path, n < CGROUP_PATH_MAX ? n + 1 : CGROUP_PATH_MAX - 4) == 0)
            return &e->name;
    }
    if (cn->count >= CGROUP_NAMES_MAX) {
        cn->over++;
        return &cn->other.name;
    }
    struct entry *e = calloc(1, sizeof(*e));
    if (!e)
        out_of_memory("cgroup names");
    e->hash = h;
    e->name.path = kept_path(path);
    if (cgroup_container_id(path, e->container))
        e->name.container = e->container;
    cn->slots[i] = e;
    cn->count++;
    return &e->name;
}

const struct cgroup_name *cgroup_names_of_pid(struct cgroup_names *cn, int pid)
{
    char path[4096];
    return cgroup_of_pid(pid, path, sizeof(path)) ? cgroup_names_intern(cn, path) : NULL;
}

int cgroup_names_count(const struct cgroup_names *cn)
{
    return cn->count;
}

uint64_t cgroup_names_over(const struct cgroup_names *cn)
{
    return cn->over;
}
