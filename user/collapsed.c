#include "collapsed.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "procmaps.h"

static void put_frame(FILE *f, const char *name)
{
    for (const char *p = name; *p; p++)
        fputc(*p == ';' ? ':' : *p == '\n' ? ' ' : *p, f);
}

void collapsed_line(FILE *f, const char *root, const struct pt_stack *st, const char *leaf,
                    uint64_t value)
{
    put_frame(f, root);
    for (int i = st->n - 1; i >= 0; i--) {
        fputc(';', f);
        put_frame(f, st->frames[i].name);
    }
    fputs(";[", f);
    put_frame(f, leaf);
    fprintf(f, "] %" PRIu64 "\n", value);
}

int collapsed_write(const char *path, struct collector *c, int count_value)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "we");
    if (!f) {
        fprintf(stderr, "parktrace: cannot write collapsed stacks to %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct pt_stack_key key, next;
    struct pt_stack_val val;
    bool first = true;
    int lines = 0;

    while (!bpf_map_get_next_key(c->t->stack_time_fd, first ? NULL : &key, &next)) {
        first = false;
        key = next;
        if (bpf_map_lookup_elem(c->t->stack_time_fd, &key, &val) || !val.count)
            continue;
        struct blocker *b = collector_blocker(c, key.slot);
        if (!b)
            continue;
        uint64_t value = count_value ? val.count : (val.ns + 500) / 1000;
        if (!value)
            continue;
        struct pm_proc *p = procmaps_get((int)key.tgid);
        collapsed_line(f, p->comm[0] ? p->comm : b->comm,
                       stacks_resolve(key.slot, (int)key.tgid, key.stack_id), b->cls.cls, value);
        lines++;
    }
    if (f != stdout && fclose(f)) {
        fprintf(stderr, "parktrace: cannot write collapsed stacks to %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (f == stdout)
        fflush(f);
    return lines;
}
