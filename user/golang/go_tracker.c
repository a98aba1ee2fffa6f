/* Go programs found and read from outside: each binary is read once (by
 * file identity), its probes attached once, and each of its processes
 * given the binary's layout. */
#include "go_tracker.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "go_binary.h"
#include "go_maps.h"
#include "loader.h"
#include "procstatus.h"
#include "safe_open.h"
#include "sanitize.h"

/* Binaries remembered, Go or not: a system-wide run looks at every process
 * once, and most run one of a few programs. Past it, the oldest goes. */
#define GO_FILES_KNOWN 1024

struct known_file {
    uint64_t id;                    /* device and inode, as its processes' maps give them */
    enum go_binary_result result;
    bool probed;                    /* GO_READ: its probes are on */
    struct pt_go_layout layout;
};

struct go_tracker {
    struct tracer *tr;
    struct known_file files[GO_FILES_KNOWN];
    int nfiles, next_evicted;
    struct go_tracker_stats stats;
};

struct go_tracker *go_tracker_new(struct tracer *t)
{
    struct go_tracker *gt = calloc(1, sizeof(*gt));
    if (!gt) {
        fprintf(stderr, "parktrace: out of memory for the Go table\n");
        return NULL;
    }
    gt->tr = t;
    return gt;
}

void go_tracker_free(struct go_tracker *gt)
{
    free(gt);
}

void go_tracker_stats(const struct go_tracker *gt, struct go_tracker_stats *s)
{
    *s = gt->stats;
}

/* A binary by its identity in its process's maps (device and inode, as
 * the text gives them), so that a process of a known one opens nothing. */
static struct known_file *known(struct go_tracker *gt, uint64_t id)
{
    for (int i = 0; i < gt->nfiles; i++)
        if (gt->files[i].id == id)
            return &gt->files[i];
    return NULL;
}

/* The binary open at FD (maps identity ID, run by PID, called COMM)
 * read and remembered. */
static struct known_file *read_file(struct go_tracker *gt, int fd, uint64_t id, int pid, const char *comm)
{
    struct known_file *f;
    if (gt->nfiles < GO_FILES_KNOWN) {
        f = &gt->files[gt->nfiles++];
    } else {
        f = &gt->files[gt->next_evicted];
        gt->next_evicted = (gt->next_evicted + 1) % GO_FILES_KNOWN;
    }
    struct go_binary gb;
    *f = (struct known_file){.id = id, .result = go_binary_read(fd, &gb)};
    char name[64];
    sanitize_copy(name, sizeof(name), comm, 32);
    if (f->result == GO_UNSUPPORTED)
        fprintf(stderr, "parktrace: %s (pid %d) is Go %s, whose goroutines parktrace cannot read: no DWARF and"
                        " a version its table does not hold, or no runtime functions found (docs/go.md)\n", name, pid, gb.version);
    if (f->result == GO_READ) {
        f->layout = gb.layout;
        f->probed = tracer_attach_go(gt->tr, fd, name, gb.probe_offset) == 0;
    }
    return f;
}

/* A file's identity as its processes' maps will give it. */
static uint64_t maps_identity(unsigned maj, unsigned min, uint64_t ino)
{
    return (ino ^ (uint64_t)maj << 52 ^ (uint64_t)min << 40) | 1;
}

/* Process PID's lowest mapping (its executable, PIE or not: libraries
 * and the vdso lie above it), from the text of its maps: no file read.
 * *ID: its device and inode, as one number (never 0). */
static bool first_mapping(int pid, uint64_t *start, uint64_t *end, uint64_t *id)
{
    char path[32], line[512];
    unsigned maj = 0, min = 0;
    uint64_t ino = 0;
    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ok = fgets(line, sizeof(line), f) &&
              sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %x:%x %" SCNu64, start, end, &maj, &min, &ino) == 5 &&
              ino != 0;
    fclose(f);
    *id = maps_identity(maj, min, ino);
    return ok;
}

/* Known file F's process PID given its layout, counted. */
static void take_process(struct go_tracker *gt, const struct known_file *f, int pid)
{
    if (f->result == GO_UNSUPPORTED)
        gt->stats.unsupported++;
    else if (!f->probed)
        gt->stats.refused++;
    else if (go_maps_set_layout(gt->tr, pid, &f->layout))
        gt->stats.processes++;
}

void go_tracker_look_file(struct go_tracker *gt, int pid, int fd, const char *comm)
{
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode))
        return;
    uint64_t id = maps_identity(major(st.st_dev), minor(st.st_dev), st.st_ino);
    const struct known_file *f = known(gt, id);
    if (!f)
        f = read_file(gt, fd, id, pid, comm);
    if (f->result != GO_NOT_GO)
        take_process(gt, f, pid);
}

bool go_tracker_look(struct go_tracker *gt, int pid, uint64_t *looked)
{
    uint64_t start, end, id;
    if (!first_mapping(pid, &start, &end, &id) || id == *looked)
        return false;
    *looked = id;
    struct known_file *f = known(gt, id);
    if (!f) {
        /* Its executable's own inode through its mapping (/proc/PID/map_files,
         * as every mapped file is opened: no path a user could swap, the file
         * an overlay maps rather than the overlay's, never a FIFO, never a
         * file on FUSE, whose server can stall every read). */
        char path[96];
        snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
        int fd = safe_open_at(AT_FDCWD, path, 0);
        if (fd < 0)
            return false;
        char comm[64] = "";
        if (procstatus_thread_comm(pid, pid, comm, sizeof(comm)))
            comm[0] = '\0';
        f = read_file(gt, fd, id, pid, comm);
        close(fd);
    }
    if (f->result == GO_NOT_GO)
        return false;
    take_process(gt, f, pid);
    return true;
}
