#include "perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procstatus.h"
#include "safe_open.h"

/* A bound on memory for a hostile file of tiny lines; a JDK 17 code cache
 * (240 MiB at most) holds far fewer blobs. */
#define MAX_ENTRIES (1 << 21)

static int fail(char *err, size_t errlen, const char *path, const char *why)
{
    snprintf(err, errlen, "perf map %s: %s", path, why);
    return -1;
}

/* Reads the whole of FD (at most PERFMAP_MAX_BYTES) into a NUL-terminated
 * buffer; NULL with WHY set if it is larger or unreadable. */
static char *read_all(int fd, size_t hint, size_t *len, const char **why)
{
    size_t cap = hint + 1, n = 0;
    char *buf = malloc(cap);
    *why = "out of memory";
    while (buf) {
        if (n + 1 == cap) {
            /* The file grew since fstat: keep reading, within the bound. */
            size_t ncap = cap * 2 > PERFMAP_MAX_BYTES + 2u ? PERFMAP_MAX_BYTES + 2u : cap * 2;
            char *nbuf = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nbuf) {
                if (ncap == cap)
                    *why = "grew past 64 MiB while being read";
                break;
            }
            buf = nbuf;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r == 0) {
            buf[n] = '\0';
            *len = n;
            return buf;
        }
        if (r < 0 && errno != EINTR) {
            *why = strerror(errno);
            break;
        }
        n += r > 0 ? (size_t)r : 0;
    }
    free(buf);
    return NULL;
}

/* A hex number of 1 to 16 digits, "0x" optional; advances *P past it. */
static bool parse_hex(const char **p, const char *end, uint64_t *v)
{
    const char *s = *p;
    if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    uint64_t x = 0;
    int digits = 0;
    for (; s < end; s++, digits++) {
        int d = *s >= '0' && *s <= '9' ? *s - '0'
              : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
              : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
        if (d < 0)
            break;
        if (digits == 16)
            return false;
        x = x << 4 | (uint64_t)d;
    }
    *p = s;
    *v = x;
    return digits > 0;
}

static const char *skip_blanks(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    return s;
}

/* Parses line [S, END) of the buffer in place: on success its name is cut
 * to size, cleaned of control characters and NUL-terminated. */
static bool parse_line(char *s, char *end, struct perfmap_entry *e)
{
    const char *p = skip_blanks(s, end);
    uint64_t start, size;
    if (!parse_hex(&p, end, &start) || p == end || (*p != ' ' && *p != '\t'))
        return false;
    p = skip_blanks(p, end);
    if (!parse_hex(&p, end, &size) || p == end || (*p != ' ' && *p != '\t'))
        return false;
    char *name = s + (skip_blanks(p, end) - s);
    while (end > name && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    if (end == name || size == 0 || start + size < start)
        return false;
    if (end - name > PERFMAP_NAME_MAX - 1)
        end = name + PERFMAP_NAME_MAX - 1;
    for (char *c = name; c < end; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    *end = '\0';
    e->start = start;
    e->end = start + size;
    e->name = name;
    return true;
}

static int by_start(const void *a, const void *b)
{
    const struct perfmap_entry *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A max-heap of entry indexes by line: the entries covering the sweep's
 * position, the newest on top. Ended ones are dropped when they surface. */
struct heap {
    int *v;
    int n;
};

static bool newer(const struct perfmap *pm, int a, int b)
{
    return pm->e[a].line > pm->e[b].line;
}

static void heap_push(struct heap *h, const struct perfmap *pm, int x)
{
    int i = h->n++;
    for (; i && newer(pm, x, h->v[(i - 1) / 2]); i = (i - 1) / 2)
        h->v[i] = h->v[(i - 1) / 2];
    h->v[i] = x;
}

static void heap_pop(struct heap *h, const struct perfmap *pm)
{
    int x = h->v[--h->n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && newer(pm, h->v[c + 1], h->v[c]))
            c++;
        if (!newer(pm, h->v[c], x))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = x;
}

/* The spans (see perfmap.h): a sweep over every start and end, in order,
 * keeping the newest entry that covers each; O(n log n). */
static int build_spans(struct perfmap *pm)
{
    size_t nb = 2 * (size_t)pm->n;
    uint64_t *bounds = malloc((nb + 1) * sizeof(*bounds));
    struct heap h = {.v = malloc(((size_t)pm->n + 1) * sizeof(int))};
    pm->span_start = malloc((nb + 1) * sizeof(*pm->span_start));
    pm->span_entry = malloc((nb + 1) * sizeof(*pm->span_entry));
    if (!bounds || !h.v || !pm->span_start || !pm->span_entry) {
        free(bounds);
        free(h.v);
        return -1;
    }
    for (int i = 0; i < pm->n; i++) {
        bounds[2 * i] = pm->e[i].start;
        bounds[2 * i + 1] = pm->e[i].end;
    }
    if (nb)
        qsort(bounds, nb, sizeof(*bounds), by_value);
    int next = 0;
    for (size_t b = 0; b < nb; b++) {
        if (b && bounds[b] == bounds[b - 1])
            continue;
        uint64_t at = bounds[b];
        while (next < pm->n && pm->e[next].start <= at)
            heap_push(&h, pm, next++);
        while (h.n && pm->e[h.v[0]].end <= at)
            heap_pop(&h, pm);
        int32_t owner = h.n ? h.v[0] : -1;
        if (!pm->nspans || pm->span_entry[pm->nspans - 1] != owner) {
            pm->span_start[pm->nspans] = at;
            pm->span_entry[pm->nspans++] = owner;
        }
    }
    free(bounds);
    free(h.v);
    return 0;
}

/* Fills PM from TEXT; -1 (out of memory, or too many entries) with WHY set. */
static int parse(struct perfmap *pm, char *text, size_t len, const char **why)
{
    int cap = 0, line = 0;
    for (char *s = text, *stop = text + len; s < stop;) {
        char *eol = memchr(s, '\n', (size_t)(stop - s));
        if (!eol)
            eol = stop;   /* a last line without a newline; text[len] is NUL */
        struct perfmap_entry e = {.line = ++line};
        if (parse_line(s, eol, &e)) {
            if (pm->n == MAX_ENTRIES) {
                *why = "has more than 2097152 entries";
                return -1;
            }
            if (pm->n == cap) {
                cap = cap ? cap * 2 : 256;
                struct perfmap_entry *ne = realloc(pm->e, (size_t)cap * sizeof(*ne));
                if (!ne) {
                    *why = "out of memory";
                    return -1;
                }
                pm->e = ne;
            }
            pm->e[pm->n++] = e;
        }
        s = eol + 1;
    }
    if (pm->n)
        qsort(pm->e, (size_t)pm->n, sizeof(*pm->e), by_start);
    if (build_spans(pm) != 0) {
        *why = "out of memory";
        return -1;
    }
    return 0;
}

/* What all loaded perf maps hold (PERFMAP_TOTAL_BYTES). */
static size_t held_bytes;

/* Loads from FD, already open on PATH (used in messages only). When
 * PRIVATE, the file must not be writable by group or others either. */
static int load_fd(struct perfmap *pm, int fd, const char *path, uid_t owner, bool private, char *err,
                   size_t errlen)
{
    memset(pm, 0, sizeof(*pm));
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fail(err, errlen, path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return fail(err, errlen, path, "not a regular file");
    if (st.st_uid != owner && st.st_uid != 0) {
        char why[96];
        snprintf(why, sizeof(why), "owned by uid %u, not by the JVM's uid %u or root", (unsigned)st.st_uid,
                 (unsigned)owner);
        return fail(err, errlen, path, why);
    }
    if (private && (st.st_mode & (S_IWGRP | S_IWOTH)))
        return fail(err, errlen, path, "writable by group or others: refusing it");
    if ((uint64_t)st.st_size > PERFMAP_MAX_BYTES) {
        char why[96];
        snprintf(why, sizeof(why), "%lld bytes, more than the 64 MiB allowed", (long long)st.st_size);
        return fail(err, errlen, path, why);
    }
    const char *why = NULL;
    size_t len;
    pm->text = read_all(fd, (size_t)st.st_size, &len, &why);
    if (!pm->text || parse(pm, pm->text, len, &why) != 0) {
        perfmap_free(pm);
        return fail(err, errlen, path, why);
    }
    size_t bytes = len + 1 + (size_t)pm->n * sizeof(*pm->e) +
                   (size_t)(2 * pm->n + 1) * (sizeof(*pm->span_start) + sizeof(*pm->span_entry));
    if (held_bytes + bytes > PERFMAP_TOTAL_BYTES) {
        perfmap_free(pm);
        return fail(err, errlen, path, "perf maps would hold more than 256 MiB together: refused");
    }
    pm->bytes = bytes;
    held_bytes += bytes;
    return 0;
}

int perfmap_load_file(struct perfmap *pm, const char *path, uid_t owner, char *err, size_t errlen)
{
    /* O_NONBLOCK: a fifo planted in place of the map must not hang us. */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        memset(pm, 0, sizeof(*pm));
        return fail(err, errlen, path, errno == ELOOP ? "is a symlink" : strerror(errno));
    }
    int rc = load_fd(pm, fd, path, owner, false, err, errlen);
    close(fd);
    return rc;
}

/* The JVM's /tmp, resolved in its root, and its perf map's PATH (for
 * messages) and status; -1 with ERR said. */
static int jvm_tmp(int pid, struct procstatus *ps, char path[96], char *err, size_t errlen)
{
    if (procstatus_read(pid, ps) != 0) {
        snprintf(err, errlen, "perf map of %d: no such process", pid);
        return -1;
    }
    snprintf(path, 96, "/proc/%d/root/tmp/perf-%d.map", pid, ps->nspid);
    int dir = safe_dir_in_root(pid, "/tmp");
    if (dir < 0)
        fail(err, errlen, path, strerror(errno));
    return dir;
}

int perfmap_load(struct perfmap *pm, int pid, char *err, size_t errlen)
{
    memset(pm, 0, sizeof(*pm));
    struct procstatus ps;
    char path[96];
    int dir = jvm_tmp(pid, &ps, path, err, errlen);
    if (dir < 0)
        return -1;
    int fd = safe_openat_here(dir, strrchr(path, '/') + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
    int saved = errno;
    close(dir);
    if (fd < 0)
        return fail(err, errlen, path, saved == ELOOP ? "is a symlink" : strerror(saved));
    int rc = load_fd(pm, fd, path, ps.euid, true, err, errlen);
    close(fd);
    return rc;
}

/* perfmap_prepare inside the JVM's /tmp, DIR: NAME is the map's name. */
static int prepare_at(int dir, const char *name, const struct procstatus *ps, const char *path,
                      struct perfmap_made *made, char *err, size_t errlen)
{
    struct stat st;
    char why[128];
    /* Where others may rename and delete, a checked file can be swapped. */
    if (fstat(dir, &st) != 0)
        return fail(err, errlen, path, strerror(errno));
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
        return fail(err, errlen, path, "its directory is writable by others and not sticky: not asking the JVM");
    int fd = safe_create_here_as(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0600,
                                 ps->euid, ps->egid);
    if (fd >= 0) {
        int rc = fchown(fd, ps->euid, ps->egid) == 0 && fstat(fd, &st) == 0 ? 1 : -1;
        int saved = errno;
        close(fd);
        made->dev = st.st_dev;
        made->ino = st.st_ino;
        if (rc < 0) {
            unlinkat(dir, name, 0);
            return fail(err, errlen, path, strerror(saved));
        }
        return 1;
    }
    if (errno != EEXIST || safe_lstat_here(dir, name, &st) != 0)
        return fail(err, errlen, path, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return fail(err, errlen, path, "is a symlink: not asking the JVM to write through it");
    if (!S_ISREG(st.st_mode))
        return fail(err, errlen, path, "is not a regular file: not asking the JVM to write it");
    if (st.st_uid != ps->euid) {
        snprintf(why, sizeof(why), "is owned by uid %u, not the JVM's uid %u: not asking the JVM to write it",
                 (unsigned)st.st_uid, (unsigned)ps->euid);
        return fail(err, errlen, path, why);
    }
    if (st.st_nlink != 1)
        return fail(err, errlen, path, "has other hard links: not asking the JVM to write it");
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return fail(err, errlen, path, "is writable by group or others: not asking the JVM to write it");
    return 0;
}

int perfmap_prepare(int pid, struct perfmap_made *made, char *err, size_t errlen)
{
    struct procstatus ps;
    char path[96];
    made->dir = -1;
    int dir = jvm_tmp(pid, &ps, path, err, errlen);
    if (dir < 0)
        return -1;
    const char *name = strrchr(path, '/') + 1;
    int rc = prepare_at(dir, name, &ps, path, made, err, errlen);
    if (rc == 1) {
        made->dir = dir;
        snprintf(made->name, sizeof(made->name), "%s", name);
    } else {
        close(dir);
    }
    return rc;
}

void perfmap_remove(struct perfmap_made *made)
{
    struct stat st;
    if (made->dir < 0)
        return;
    /* The JVM (or its user) may have replaced it: only the file made goes. */
    if (safe_lstat_here(made->dir, made->name, &st) == 0 && st.st_dev == made->dev &&
        st.st_ino == made->ino)
        unlinkat(made->dir, made->name, 0);
    close(made->dir);
    made->dir = -1;
}

const struct perfmap_entry *perfmap_find(const struct perfmap *pm, uint64_t pc)
{
    /* The last span starting at or before PC. */
    int lo = 0, hi = pm->nspans;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (pm->span_start[mid] <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && pm->span_entry[lo - 1] >= 0 ? &pm->e[pm->span_entry[lo - 1]] : NULL;
}

void perfmap_free(struct perfmap *pm)
{
    held_bytes -= pm->bytes;
    free(pm->e);
    free(pm->span_start);
    free(pm->span_entry);
    free(pm->text);
    memset(pm, 0, sizeof(*pm));
}
