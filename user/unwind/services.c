#include "services.h"

#include <stdio.h>
#include <string.h>

#include "elfsyms.h"
#include "procmaps.h"
#include "unwind.h"
#include "unwind_tables.h"

int services_open(struct pt_services *sv, const struct unwind_maps *kernel, const char *cache_dir)
{
    memset(sv, 0, sizeof(*sv));
    sv->syms = elfsyms_new();
    sv->maps = sv->syms ? procmaps_new(sv->syms) : NULL;
    sv->unwinder = sv->maps ? unwinder_new(sv->maps) : NULL;
    if (sv->unwinder && kernel)
        sv->tables = unwind_tables_new(kernel, cache_dir, sv->maps);
    if (!sv->unwinder || (kernel && !sv->tables)) {
        fprintf(stderr, "parktrace: out of memory for the symbol and unwind services\n");
        services_close(sv);
        return -1;
    }
    return 0;
}

void services_close(struct pt_services *sv)
{
    /* Users first: the tables and unwinders point into the maps, the maps
     * into the symbol tables. */
    unwind_tables_free(sv->tables);
    unwinder_free(sv->unwinder);
    procmaps_free(sv->maps);
    elfsyms_free(sv->syms);
    memset(sv, 0, sizeof(*sv));
}
