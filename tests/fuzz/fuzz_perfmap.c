/* The perf map reader: a JVM's /tmp/perf-PID.map is written by the JVM's
 * user (or anyone, inside a container's /tmp), so its whole text is hostile.
 * The input is the file; every entry found is then looked up at its edges
 * and named, as jvm_frames does with the pcs of a stack. */
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lookups at PC and around it must agree with the entries' own ranges. */
static void find_around(const struct perfmap *pm, uint64_t pc)
{
    const uint64_t pcs[] = {pc - 1, pc, pc + 1};
    for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
        const struct perfmap_entry *e = perfmap_find(pm, pcs[i]);
        if (e && !(e->start <= pcs[i] && pcs[i] < e->end))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, "perf-1.map");
    struct perfmap pm;
    char err[256];
    if (perfmap_load_file(&pm, path, getuid(), err, sizeof(err)) != 0)
        return 0;
    char name[PERFMAP_NAME_MAX];
    for (int i = 0; i < pm.n && i < 256; i++) {
        const struct perfmap_entry *e = &pm.e[i];
        if (e->start >= e->end || strlen(e->name) >= PERFMAP_NAME_MAX)
            abort();
        find_around(&pm, e->start);
        find_around(&pm, e->end);
        perfmap_java_name(e->name, name, sizeof(name));
    }
    perfmap_free(&pm);
    return 0;
}
