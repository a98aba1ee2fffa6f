/* A file as the caches of other users' files know it: its inode, and what
 * changes when it is written in place or its inode is given to another
 * file (size, modification and change times). */
#ifndef PT_FILE_ID_H
#define PT_FILE_ID_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "monotonic.h"

struct file_id {
    uint64_t dev, ino, size, mtime_ns, ctime_ns;
};

static inline struct file_id file_id_of(const struct stat *st)
{
    return (struct file_id){.dev = st->st_dev, .ino = st->st_ino, .size = (uint64_t)st->st_size,
                            .mtime_ns = timespec_ns(st->st_mtim), .ctime_ns = timespec_ns(st->st_ctim)};
}

/* A hash of an inode, for tables keyed on files. */
static inline uint64_t inode_hash(uint64_t dev, uint64_t ino)
{
    return (ino * 0x9e3779b97f4a7c15ull) ^ dev;
}

/* The same inode (the contents may differ). */
static inline bool file_id_same_inode(const struct file_id *a, const struct file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino;
}

/* The same inode with the same contents. */
static inline bool file_id_equal(const struct file_id *a, const struct file_id *b)
{
    return file_id_same_inode(a, b) && a->size == b->size && a->mtime_ns == b->mtime_ns &&
           a->ctime_ns == b->ctime_ns;
}

#endif
