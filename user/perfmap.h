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
#define PERFMAP_NAME_MAX 1024           /* longer names are cut, NUL included */

struct perfmap_entry {
    uint64_t start, end;   /* [start, end) */
    char *name;            /* as in the file, cut to PERFMAP_NAME_MAX - 1 bytes */
    int line;              /* 1-based; where entries overlap, the later line wins */
};

struct perfmap {
    struct perfmap_entry *e;   /* sorted by start */
    int n;
    uint64_t *reach;           /* reach[i]: highest end among e[0..i] */
    char *text;                /* the file; entry names point into it */
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

/* Whether process PID has a perf map now; and removing it (for a map only
 * parktrace caused). Both act inside the process's own /tmp. */
bool perfmap_exists(int pid);
void perfmap_remove(int pid);

/* Java's name for a perf map name: "void java.util.concurrent.locks.
 * ReentrantLock.lock()" becomes "java.util.concurrent.locks.ReentrantLock.lock"
 * (class and method, no return type, parameters or tier marker). Other code
 * blobs keep their name in brackets: "[Interpreter]", "[StubRoutines (1)]". */
void perfmap_java_name(const char *perf_name, char *out, size_t len);

#endif
