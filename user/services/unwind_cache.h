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

/* Uses DIR (created 0700 when missing), or nothing when DIR is NULL or
 * "none". A directory another user could write to is not used (one line
 * on stderr says why). The directory is kept under 256 MiB, the files
 * written longest ago deleted first. */
void unwind_cache_init(const char *dir);

/* The table stored for key ID (LEN bytes), in *N 8-byte entries with
 * *ROWS rows, newly allocated; NULL when there is none or it does not
 * check out (wrong owner, size, format or checksum). */
uint64_t *unwind_cache_load(const uint8_t *id, size_t len, size_t *n, size_t *rows);

/* Stores a table under key ID; failures cost only the next run's
 * build (said once on stderr). */
void unwind_cache_store(const uint8_t *id, size_t len, const uint64_t *table, size_t n, size_t rows);

/* Tables loaded from and written to the cache in this run. */
void unwind_cache_counts(size_t *loaded, size_t *stored);

void unwind_cache_close(void);

#endif
