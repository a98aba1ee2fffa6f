#include "pprof_strings.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"

/* FNV-1a: short frame names, no adversary needing more (a name only costs
 * its own lookups). */
static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Doubles the hash at half full and puts every index back. */
static int rehash(struct pprof_strings *t)
{
    size_t n = t->nslots ? 2 * t->nslots : 256;
    uint32_t *slots = calloc(n, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = hash(t->v[i]) & (n - 1);
        while (slots[j])
            j = (j + 1) & (n - 1);
        slots[j] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

static int64_t intern(struct pprof_strings *t, const char *s);

/* Names from other processes go in cleaned, as to every other output:
 * valid UTF-8 (a protobuf string must be), no control character (a
 * profile viewer prints them). Never longer than S: a byte becomes '?'. */
int64_t pprof_string(struct pprof_strings *t, const char *s)
{
    size_t n = strlen(s) + 1;
    char stack[256], *clean = n <= sizeof(stack) ? stack : malloc(n);
    if (!clean)
        return -1;
    sanitize_copy(clean, n, s, SIZE_MAX);
    int64_t i = intern(t, clean);
    if (clean != stack)
        free(clean);
    return i;
}

static int64_t intern(struct pprof_strings *t, const char *s)
{
    if (2 * (t->n + 1) > t->nslots && rehash(t))
        return -1;
    size_t j = hash(s) & (t->nslots - 1);
    for (; t->slots[j]; j = (j + 1) & (t->nslots - 1))
        if (strcmp(t->v[t->slots[j] - 1], s) == 0)
            return t->slots[j] - 1;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        char **v = realloc(t->v, cap * sizeof(*v));
        if (!v)
            return -1;
        t->v = v;
        uint64_t *func = realloc(t->func, cap * sizeof(*func));
        if (!func)
            return -1;
        t->func = func;
        t->cap = cap;
    }
    char *copy = strdup(s);
    if (!copy)
        return -1;
    t->v[t->n] = copy;
    t->func[t->n] = 0;
    t->slots[j] = (uint32_t)t->n + 1;
    return (int64_t)t->n++;
}

void pprof_strings_free(struct pprof_strings *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    free(t->func);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}
