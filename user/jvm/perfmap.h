/* The perf map a JVM writes for its JIT-compiled code (jcmd PID
 * Compiler.perfmap): /tmp/perf-<pid>.map, one "START SIZE NAME" line per
 * code blob, START and SIZE in hex. The file is read as hostile input: it
 * lives in a world-writable directory, possibly inside a container. */
#ifndef PT_PERFMAP_H
#define PT_PERFMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERFMAP_MAX_BYTES (64u << 20)   /* larger files are refused */
/* All perf maps held at once, text and indexes: a load past it is refused. */
#define PERFMAP_TOTAL_BYTES (256u << 20)
#define PERFMAP_NAME_MAX 1024           /* longer names are cut, NUL included */

struct perfmap_entry {
    uint64_t start, end;   /* [start, end) */
    char *name;            /* as in the file, cut to PERFMAP_NAME_MAX - 1 bytes */
    int line;              /* 1-based; where entries overlap, the later line wins */
};

struct perfmap {
    struct perfmap_entry *e;   /* sorted by start */
    int n;
    /* The address space cut where the winning entry changes: span i is
     * [span_start[i], span_start[i + 1]) and belongs to e[span_entry[i]],
     * or to none when -1 (the last span always is). A lookup is one binary
     * search, however entries overlap. */
    uint64_t *span_start;
    int32_t *span_entry;
    int nspans;
    char *text;                /* the file; entry names point into it */
    size_t bytes;              /* held, counted against PERFMAP_TOTAL_BYTES */
};

/* Loads the perf map of process PID (its /tmp, its pid namespace), sorted
 * by start. Returns 0, or -1 with a one-line reason in ERR. */
int perfmap_load(struct perfmap *pm, int pid, char *err, size_t errlen);

/* The same for the file at PATH, which must be a regular file owned by
 * OWNER or root (no symlink is followed). */
int perfmap_load_file(struct perfmap *pm, const char *path, uid_t owner, char *err, size_t errlen);

/* The entry containing PC, or NULL. */
const struct perfmap_entry *perfmap_find(const struct perfmap *pm, uint64_t pc);

void perfmap_free(struct perfmap *pm);

/* A perf map parktrace made: the JVM's /tmp (held open, so the map can be
 * removed after the JVM has exited), its name there and its inode. */
struct perfmap_made {
    int dir;                   /* -1: none made */
    char name[32];
    dev_t dev;
    ino_t ino;
};

/* Whether JVM PID may be asked to write its perf map: the JVM opens it for
 * writing as its own user (maybe root), following links. Returns 1 when
 * there was none and parktrace made it, empty, owned by the JVM's euid,
 * mode 0600 (in a sticky /tmp nobody else can then replace it; it is
 * parktrace's to remove: MADE, for perfmap_remove), 0 when the JVM's own
 * map is there (a regular file with one link, owned by the JVM's euid, not
 * writable by group or others), and -1 with a reason in ERR otherwise: a
 * link, another user's file, a /tmp others may rename in. Acts inside the
 * JVM's own /tmp. MADE->dir is -1 unless 1 is returned. */
int perfmap_prepare(int pid, struct perfmap_made *made, char *err, size_t errlen);
/* Removes the perf map parktrace made (MADE from perfmap_prepare), if the
 * file at its name is still the one made, even when the JVM has exited
 * meanwhile (its /tmp is the host's: the map would outlive it); frees
 * MADE. Nothing when MADE->dir is -1. */
void perfmap_remove(struct perfmap_made *made);

/* Java's name for a perf map name: "void java.util.concurrent.locks.
 * ReentrantLock.lock()" becomes "java.util.concurrent.locks.ReentrantLock.lock"
 * (class and method, no return type, parameters or tier marker). Other code
 * blobs keep their name in brackets: "[Interpreter]", "[StubRoutines (1)]". */
void perfmap_java_name(const char *perf_name, char *out, size_t len);

#endif
