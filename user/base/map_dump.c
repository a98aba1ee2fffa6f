#include "map_dump.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNK 4096u   /* entries per system call */

static void reserve(struct map_dump *d, uint32_t want, size_t key_size, size_t val_size)
{
    if (want <= d->cap)
        return;
    uint32_t cap = d->cap ? d->cap : CHUNK;
    while (cap < want)
        cap *= 2;
    void *k = realloc(d->keys, (size_t)cap * key_size), *v = k ? realloc(d->vals, (size_t)cap * val_size) : NULL;
    if (!k || !v) {
        fprintf(stderr, "parktrace: out of memory reading a kernel table\n");
        exit(1);
    }
    d->keys = k;
    d->vals = v;
    d->cap = cap;
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
    d->n = d->cap = 0;
}
