/* The perf map reader: a JVM's /tmp/perf-PID.map is written by the JVM's
 * user (or anyone, inside a container's /tmp), so its whole text is hostile.
 * The input is the file. Every entry found is then named, and looked up at
 * and around its edges, each lookup checked against a plain scan: the entry
 * holding the pc that comes latest in the file, or none. */
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "perfmap.h"

#define CHECKED_ENTRIES 256   /* the scan is quadratic: enough for small inputs */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct perfmap_entry *scan(const struct perfmap *pm, uint64_t pc)
{
    const struct perfmap_entry *best = NULL;
    for (int i = 0; i < pm->n; i++)
        if (pm->e[i].start <= pc && pc < pm->e[i].end && (!best || pm->e[i].line > best->line))
            best = &pm->e[i];
    return best;
}

static void check_around(const struct perfmap *pm, uint64_t pc)
{
    for (uint64_t p = pc - 1; p != pc + 2; p++)
        if (perfmap_find(pm, p) != scan(pm, p))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, "perf-1.map");
    struct perfmap pm;
    char err[256];
    if (perfmap_load_file(&pm, path, getuid(), err, sizeof(err)) != 0)
        return 0;
    char name[PERFMAP_NAME_MAX];
    for (int i = 0; i < pm.n && i < CHECKED_ENTRIES; i++) {
        const struct perfmap_entry *e = &pm.e[i];
        if (e->start >= e->end || strlen(e->name) >= PERFMAP_NAME_MAX)
            abort();
        check_around(&pm, e->start);
        check_around(&pm, e->end);
        perfmap_java_name(e->name, name, sizeof(name));
    }
    perfmap_free(&pm);
    return 0;
}
