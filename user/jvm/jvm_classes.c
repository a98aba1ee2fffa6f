#include "jvm_classes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 1024

struct jvm_class {
    struct jvm_class *next;
    uint64_t klass;
    char *name, *supers;
};

struct jvm_classes {
    struct jvm_class *bucket[BUCKETS];
    int n;
};

static unsigned bucket_of(uint64_t klass)
{
    return (unsigned)((klass >> 3) * 0x9E3779B97F4A7C15ull >> 54) % BUCKETS;
}

bool jvm_classes_get(const struct jvm_classes *c, uint64_t klass, char *name, size_t len, char *supers,
                     size_t slen)
{
    if (!c)
        return false;
    for (const struct jvm_class *e = c->bucket[bucket_of(klass)]; e; e = e->next)
        if (e->klass == klass) {
            snprintf(name, len, "%s", e->name);
            snprintf(supers, slen, "%s", e->supers);
            return true;
        }
    return false;
}

static void clear(struct jvm_classes *c)
{
    for (int b = 0; b < BUCKETS; b++)
        for (struct jvm_class *e = c->bucket[b], *next; e; e = next) {
            next = e->next;
            free(e->name);
            free(e->supers);
            free(e);
        }
    memset(c, 0, sizeof(*c));
}

void jvm_classes_put(struct jvm_classes **cp, uint64_t klass, const char *name, const char *supers)
{
    if (!*cp && !(*cp = calloc(1, sizeof(**cp))))
        return;                       /* read again next time */
    struct jvm_classes *c = *cp;
    if (c->n >= JVM_CLASSES_MAX)
        clear(c);
    struct jvm_class *e = calloc(1, sizeof(*e));
    if (!e || !(e->name = strdup(name)) || !(e->supers = strdup(supers))) {
        if (e)
            free(e->name);
        free(e);
        return;
    }
    e->klass = klass;
    unsigned b = bucket_of(klass);
    e->next = c->bucket[b];
    c->bucket[b] = e;
    c->n++;
}

void jvm_classes_free(struct jvm_classes *c)
{
    if (!c)
        return;
    clear(c);
    free(c);
}
