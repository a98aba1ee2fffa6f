#include "kallsyms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oom.h"

/* Bounds on what is read: a kernel with every module loaded has some
 * 300 000 symbols. */
#define KALLSYMS_MAX 2000000
#define KALLSYMS_NAMES_MAX (64u << 20)

struct sym {
    uint64_t addr;
    uint32_t name_at;
};

static int by_addr(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Appends NAME to the table's names: its offset, or UINT32_MAX past the bound. */
static uint32_t add_name(struct kallsyms *k, size_t *len, size_t *cap, const char *name)
{
    size_t n = strlen(name) + 1;
    if (*len + n > KALLSYMS_NAMES_MAX)
        return UINT32_MAX;
    if (*len + n > *cap) {
        size_t want = *cap ? 2 * *cap : 1u << 20;
        char *p = realloc(k->names, want);
        if (!p)
            out_of_memory("the kernel's symbols");
        k->names = p;
        *cap = want;
    }
    memcpy(k->names + *len, name, n);
    uint32_t at = (uint32_t)*len;
    *len += n;
    return at;
}

void kallsyms_load(struct kallsyms *k)
{
    if (k->tried)
        return;
    k->tried = true;
    FILE *f = fopen("/proc/kallsyms", "re");
    if (!f)
        return;
    struct sym *syms = NULL;
    size_t n = 0, cap = 0, len = 0, names_cap = 0;
    char line[512];
    bool nonzero = false;
    while (n < KALLSYMS_MAX && fgets(line, sizeof(line), f)) {
        unsigned long long addr;
        char type, name[256];
        if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || (type != 't' && type != 'T'))
            continue;
        nonzero |= addr != 0;
        uint32_t at = add_name(k, &len, &names_cap, name);
        if (at == UINT32_MAX)
            break;
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            struct sym *p = realloc(syms, cap * sizeof(*syms));
            if (!p)
                out_of_memory("the kernel's symbols");
            syms = p;
        }
        syms[n++] = (struct sym){addr, at};
    }
    fclose(f);
    /* Without the right to see kernel addresses, every one reads 0. */
    if (!nonzero || !n) {
        free(syms);
        free(k->names);
        k->names = NULL;
        return;
    }
    qsort(syms, n, sizeof(*syms), by_addr);
    k->addr = malloc(n * sizeof(*k->addr));
    k->name_at = malloc(n * sizeof(*k->name_at));
    if (!k->addr || !k->name_at)
        out_of_memory("the kernel's symbols");
    for (size_t i = 0; i < n; i++) {
        k->addr[i] = syms[i].addr;
        k->name_at[i] = syms[i].name_at;
    }
    k->n = n;
    free(syms);
}

const char *kallsyms_name(const struct kallsyms *k, uint64_t addr)
{
    if (!k->n || addr < k->addr[0])
        return NULL;
    size_t lo = 0, hi = k->n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (k->addr[mid] <= addr)
            lo = mid;
        else
            hi = mid;
    }
    return k->names + k->name_at[lo];
}

void kallsyms_free(struct kallsyms *k)
{
    free(k->addr);
    free(k->name_at);
    free(k->names);
    memset(k, 0, sizeof(*k));
}
