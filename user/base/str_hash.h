/* FNV-1a over a string, for user space's in-memory hash tables (never
 * stored or compared across runs). */
#ifndef PT_STR_HASH_H
#define PT_STR_HASH_H
#include <stdint.h>

#define STR_HASH_SEED 0xcbf29ce484222325ull

/* H carried on over the bytes of S (NULL: none). */
static inline uint64_t str_hash_from(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static inline uint64_t str_hash(const char *s)
{
    return str_hash_from(STR_HASH_SEED, s);
}

#endif
