#include "self_counters.h"

#include <inttypes.h>

#define SELF_ENTRY(id, name, unit, line, format, help, where) {name, unit, line, format, help, where},
const struct self_counter self_counters[SELF_COUNT] = {SELF_COUNTERS(SELF_ENTRY)};
#undef SELF_ENTRY

void self_values_print(FILE *f, const struct self_values *v, enum self_line line,
                       void (*programs)(FILE *f, void *ctx), void *ctx)
{
    fprintf(f, "parktrace: self");
    for (int i = 0; i < SELF_COUNT; i++) {
        const struct self_counter *c = &self_counters[i];
        if (c->line != line)
            continue;
        switch (c->format) {
        case SELF_UINT: fprintf(f, " %s=%" PRIu64, c->name, v->v[i].u); break;
        case SELF_INT: fprintf(f, " %s=%" PRId64, c->name, v->v[i].i); break;
        case SELF_FIXED1: fprintf(f, " %s=%.1f", c->name, v->v[i].d); break;
        case SELF_FIXED3: fprintf(f, " %s=%.3f", c->name, v->v[i].d); break;
        case SELF_PROGRAMS:
            if (programs)
                programs(f, ctx);
            break;
        }
    }
    fputc('\n', f);
}
