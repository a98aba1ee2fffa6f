#include "unwind_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../bpf/parktrace.h"
#include "build_id.h"
#include "fd_io.h"

/* Bump when the rows or the table layout change meaning: older files are
 * then ignored and rewritten. */
#define CACHE_FORMAT 2
#define MAX_ENTRIES (1u << 25)    /* 256 MiB: far above any real binary */
/* The directory's size: past it, the files written longest ago go first. */
#define CACHE_BUDGET (256ull << 20)
#define CACHE_MAX_FILES 4096

struct cache_head {
    char magic[8];
    uint32_t format, row_size, page_shift, crc;
    uint64_t entries, rows;
};

static const char MAGIC[8] = "PTUNWIND";
struct unwind_cache {
    int dir_fd;              /* -1: no cache */
    char dir_name[256];
    size_t loaded, stored;
    bool store_failed;
};

static void not_used(const char *dir, const char *why)
{
    fprintf(stderr, "parktrace: unwind cache %s not used: %s\n", dir, why);
}

struct unwind_cache *unwind_cache_open(const char *dir)
{
    struct unwind_cache *uc = calloc(1, sizeof(*uc));
    if (!uc)
        return NULL;
    uc->dir_fd = -1;
    if (!dir || strcmp(dir, "none") == 0)
        return uc;
    snprintf(uc->dir_name, sizeof(uc->dir_name), "%s", dir);
    if (mkdir(dir, 0700) && errno != EEXIST) {
        not_used(dir, strerror(errno));
        return uc;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        not_used(dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        return uc;
    }
    /* Tables steer the kernel's stack walks: only a directory no one else
     * can write to is trusted. */
    if (st.st_uid != geteuid() || (st.st_mode & 022)) {
        not_used(dir, st.st_uid != geteuid() ? "owned by another user" : "writable by other users");
        close(fd);
        return uc;
    }
    uc->dir_fd = fd;
    return uc;
}

/* <key in hex>.v<format>: a format change leaves old files unread. */
#define NAME_MAX_LEN (2 * UNWIND_CACHE_KEY_MAX + 16)
static void file_name(const uint8_t *id, size_t len, char out[NAME_MAX_LEN])
{
    build_id_hex(id, len, out);
    snprintf(out + 2 * len, NAME_MAX_LEN - 2 * len, ".v%d", CACHE_FORMAT);
}

uint64_t *unwind_cache_load(struct unwind_cache *uc, const uint8_t *id, size_t len, size_t *n, size_t *rows)
{
    char name[NAME_MAX_LEN];
    if (!uc || uc->dir_fd < 0 || !len || len > UNWIND_CACHE_KEY_MAX)
        return NULL;
    file_name(id, len, name);
    int fd = openat(uc->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat st;
    struct cache_head h;
    uint64_t *t = NULL;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) ||
        !fd_read_all(fd, &h, sizeof(h), -1) || memcmp(h.magic, MAGIC, sizeof(MAGIC)) || h.format != CACHE_FORMAT ||
        h.row_size != sizeof(struct pt_urow) || h.page_shift != PT_UNWIND_PAGE_SHIFT ||
        !h.entries || h.entries > MAX_ENTRIES || h.rows >= h.entries ||
        (uint64_t)st.st_size != sizeof(h) + h.entries * sizeof(uint64_t))
        goto out;
    t = malloc(h.entries * sizeof(*t));
    if (!t || !fd_read_all(fd, t, h.entries * sizeof(*t), -1) ||
        crc32(0, (const Bytef *)t, (uInt)(h.entries * sizeof(*t))) != h.crc) {
        free(t);
        t = NULL;
        goto out;
    }
    *n = h.entries;
    *rows = h.rows;
    uc->loaded++;
out:
    close(fd);
    return t;
}

/* Deletes the oldest files until NEED more bytes fit in the budget. */
static void make_room(int dir_fd, uint64_t need)
{
    int fd = dup(dir_fd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct entry { char name[NAME_MAX + 1]; time_t mtime; uint64_t size; } *e = NULL;
    size_t n = 0;
    uint64_t total = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < CACHE_MAX_FILES) {
        struct stat st;
        if (de->d_name[0] == '.' || fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
            continue;
        struct entry *p = realloc(e, (n + 1) * sizeof(*e));
        if (!p)
            break;
        e = p;
        snprintf(e[n].name, sizeof(e[n].name), "%s", de->d_name);
        e[n].mtime = st.st_mtime;
        e[n].size = (uint64_t)st.st_blocks * 512;
        total += e[n++].size;
    }
    closedir(d);
    while (total + need > CACHE_BUDGET && n) {
        size_t old = 0;
        for (size_t i = 1; i < n; i++)
            if (e[i].mtime < e[old].mtime)
                old = i;
        unlinkat(dir_fd, e[old].name, 0);
        total -= e[old].size;
        e[old] = e[--n];
    }
    free(e);
}

void unwind_cache_store(struct unwind_cache *uc, const uint8_t *id, size_t len, const uint64_t *table, size_t n,
                        size_t rows)
{
    char name[NAME_MAX_LEN], tmp[NAME_MAX_LEN + 16];
    if (!uc || uc->dir_fd < 0 || !len || len > UNWIND_CACHE_KEY_MAX || !n || n > MAX_ENTRIES)
        return;
    int dir_fd = uc->dir_fd;
    make_room(dir_fd, sizeof(struct cache_head) + n * sizeof(*table));
    file_name(id, len, name);
    /* Written aside and renamed: a reader never sees half a file. */
    snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
    int fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct cache_head h = {.format = CACHE_FORMAT, .row_size = sizeof(struct pt_urow),
                           .page_shift = PT_UNWIND_PAGE_SHIFT, .entries = n, .rows = rows};
    memcpy(h.magic, MAGIC, sizeof(MAGIC));
    h.crc = (uint32_t)crc32(0, (const Bytef *)table, (uInt)(n * sizeof(*table)));
    bool ok = fd >= 0 && fd_write_all(fd, &h, sizeof(h)) && fd_write_all(fd, table, n * sizeof(*table));
    int err = errno;
    if (fd >= 0 && close(fd) && ok) {
        ok = false;
        err = errno;
    }
    if (ok && renameat(dir_fd, tmp, dir_fd, name)) {
        ok = false;
        err = errno;
    }
    if (ok) {
        uc->stored++;
        return;
    }
    if (fd >= 0)
        unlinkat(dir_fd, tmp, 0);
    if (!uc->store_failed)
        fprintf(stderr, "parktrace: cannot write to the unwind cache %s: %s\n", uc->dir_name, strerror(err));
    uc->store_failed = true;
}

void unwind_cache_counts(const struct unwind_cache *uc, size_t *l, size_t *s)
{
    *l = uc ? uc->loaded : 0;
    *s = uc ? uc->stored : 0;
}

void unwind_cache_close(struct unwind_cache *uc)
{
    if (!uc)
        return;
    if (uc->dir_fd >= 0)
        close(uc->dir_fd);
    free(uc);
}
