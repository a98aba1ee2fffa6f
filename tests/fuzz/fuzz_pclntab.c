/* A Go binary's function table (.gopclntab) as another user wrote it:
 * go_pclntab_walk must stay inside the input and hand out only names that
 * end within it, no longer than asked. */
#include <stdlib.h>
#include <string.h>

#include "go_pclntab.h"

#define NAME_MAX_BYTES 255

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct bounds {
    const uint8_t *data;
    size_t size;
};

static bool check_name(const char *name, uint64_t addr, uint64_t size, void *arg)
{
    (void)addr;
    (void)size;
    const struct bounds *b = arg;
    const uint8_t *p = (const uint8_t *)name;
    if (p < b->data || p >= b->data + b->size)
        abort();
    size_t n = strnlen(name, b->data + b->size - p);
    if (n == 0 || n > NAME_MAX_BYTES || p + n >= b->data + b->size)
        abort();
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly SIZE bytes: ASan sees a read one past its end. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct bounds b = {copy, size};
    go_pclntab_walk(copy, size, 0x401000, NAME_MAX_BYTES, check_name, &b);
    free(copy);
    return 0;
}
