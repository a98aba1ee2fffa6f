#include "map_dump.h"
#include "oom.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 4096u   /* entries per system call */

/* Room for WANT entries: by bytes, as one dump may serve maps of
 * different key and value sizes in turn. */
static void *grow(void *p, size_t *len, size_t want)
{
    if (want <= *len)
        return p;
    size_t len2 = *len ? *len : 4096;
    while (len2 < want)
        len2 *= 2;
    void *q = realloc(p, len2);
    if (!q) {
        out_of_memory("a kernel table");
    }
    *len = len2;
    return q;
}

static void reserve(struct map_dump *d, uint32_t want, size_t key_size, size_t val_size)
{
    d->keys = grow(d->keys, &d->keys_len, (size_t)want * key_size);
    d->vals = grow(d->vals, &d->vals_len, (size_t)want * val_size);
}

int map_dump(int fd, size_t key_size, size_t val_size, struct map_dump *d)
{
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    uint64_t batch = 0;            /* the kernel's cursor: a bucket index */
    uint32_t chunk = CHUNK;
    d->n = 0;
    for (int round = 0;; round++) {
        reserve(d, d->n + chunk, key_size, val_size);
        uint32_t count = chunk;
        int err = bpf_map_lookup_batch(fd, round ? &batch : NULL, &batch, (char *)d->keys + (size_t)d->n * key_size,
                                       (char *)d->vals + (size_t)d->n * val_size, &count, &opts);
        if (err && errno == ENOSPC && count == 0 && chunk < (1u << 20)) {
            chunk *= 2;            /* one bucket holds more than a chunk */
            round--;
            continue;
        }
        d->n += count;
        if (err)
            return errno == ENOENT ? 0 : -1;   /* ENOENT: the end */
    }
}

void map_dump_add(struct map_dump *d, const void *key, size_t key_size, const void *val, size_t val_size)
{
    reserve(d, d->n + 1, key_size, val_size);
    memcpy((char *)d->keys + (size_t)d->n * key_size, key, key_size);
    memcpy((char *)d->vals + (size_t)d->n * val_size, val, val_size);
    d->n++;
}

uint32_t map_delete_keys(int fd, const void *keys, size_t key_size, uint32_t n)
{
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    uint32_t done = 0, deleted = 0;
    while (done < n) {
        uint32_t count = n - done;
        int err = bpf_map_delete_batch(fd, (const char *)keys + (size_t)done * key_size, &count, &opts);
        done += count;
        deleted += count;
        if (err)
            done++;                /* that key was gone already: skip it */
    }
    return deleted;
}

void map_dump_free(struct map_dump *d)
{
    free(d->keys);
    free(d->vals);
    d->keys = d->vals = NULL;
    d->n = 0;
    d->keys_len = d->vals_len = 0;
}
