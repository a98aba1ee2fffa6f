/* The /proc/PID/maps parser (procmaps_parse): a process chooses the names
 * of the files it maps (any bytes but '/' and NUL in a name, " (deleted)"
 * suffixes, paths near PATH_MAX), so the text is hostile even though the
 * kernel writes it. The input is the whole file; every mapping found is
 * then looked up by address, as the symbolizer does. */
#include <stdio.h>
#include <stdlib.h>

#include "procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;   /* fmemopen wants a buffer */
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    struct pm_proc p = {.pid = 1};
    procmaps_parse(f, &p);
    fclose(f);
    for (int i = 0; i < p.nmaps; i++) {
        const struct pm_map *m = &p.maps[i];
        if (m->start >= m->end || (m->path && m->path[0] != '/'))
            abort();
        if (!procmaps_find(&p, m->start) || procmaps_find(&p, m->end - 1) == NULL)
            abort();   /* an address inside a mapping finds one */
    }
    for (int i = 0; i < p.nmaps; i++)
        if (p.maps[i].owns_path)      /* a file's mappings share its path */
            free(p.maps[i].path);
    free(p.maps);
    return 0;
}
