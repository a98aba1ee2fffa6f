/* Unwind tables kept on disk between runs, one file per binary named by
 * its GNU build-id, so a binary's CFI is read with libdw once per machine
 * rather than once per run (libjvm.so: about 0.1 s of CPU). */
#ifndef PT_UNWIND_CACHE_H
#define PT_UNWIND_CACHE_H
#include <stddef.h>
#include <stdint.h>

#include "build_id.h"

#define PT_UNWIND_CACHE_DIR "/var/cache/parktrace"
/* A table's key: the binary's build-id and a checksum of its CFI, so a
 * binary that forges another's build-id gets a key of its own. */
#define UNWIND_CACHE_KEY_MAX (BUILD_ID_MAX + 4)

struct unwind_cache;

/* The cache in DIR (created 0700 when missing), or one that keeps nothing
 * when DIR is NULL or "none"; NULL only when out of memory. A directory another user could write to is not used (one line
 * on stderr says why). The directory is kept under 256 MiB, the files
 * written longest ago deleted first. */
struct unwind_cache *unwind_cache_open(const char *dir);

/* The table stored for key ID (LEN bytes), in *N 8-byte entries with
 * *ROWS rows, newly allocated; NULL when there is none or it does not
 * check out (wrong owner, size, format or checksum). */
uint64_t *unwind_cache_load(struct unwind_cache *uc, const uint8_t *id, size_t len, size_t *n, size_t *rows);

/* Stores a table under key ID; failures cost only the next run's
 * build (said once on stderr). */
void unwind_cache_store(struct unwind_cache *uc, const uint8_t *id, size_t len, const uint64_t *table, size_t n,
                        size_t rows);

/* Tables loaded from and written to the cache in this run. */
void unwind_cache_counts(const struct unwind_cache *uc, size_t *loaded, size_t *stored);

void unwind_cache_close(struct unwind_cache *uc);

#endif
