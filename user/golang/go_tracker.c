/* Go programs found and read from outside: each binary is read once (by
 * file identity), its probes attached once, and each of its processes
 * given the binary's layout. */
#include "go_tracker.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "go_binary.h"
#include "go_maps.h"
#include "loader.h"
#include "sanitize.h"

/* Binaries remembered, Go or not: a system-wide run looks at every process
 * once, and most run one of a few programs. Past it, the oldest goes. */
#define GO_FILES_KNOWN 1024

struct known_file {
    dev_t dev;
    ino_t ino;
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

static struct known_file *known(struct go_tracker *gt, const struct stat *st)
{
    for (int i = 0; i < gt->nfiles; i++)
        if (gt->files[i].dev == st->st_dev && gt->files[i].ino == st->st_ino)
            return &gt->files[i];
    return NULL;
}

/* The binary open at FD (of status ST, run by PID) read and remembered. */
static struct known_file *read_file(struct go_tracker *gt, int fd, const struct stat *st, int pid)
{
    struct known_file *f;
    if (gt->nfiles < GO_FILES_KNOWN) {
        f = &gt->files[gt->nfiles++];
    } else {
        f = &gt->files[gt->next_evicted];
        gt->next_evicted = (gt->next_evicted + 1) % GO_FILES_KNOWN;
    }
    struct go_binary gb;
    *f = (struct known_file){.dev = st->st_dev, .ino = st->st_ino, .result = go_binary_read(fd, &gb)};
    char comm[64] = "", name[64];
    char path[32];
    snprintf(path, sizeof(path), "/proc/%d/comm", pid);
    FILE *c = fopen(path, "re");
    if (c) {
        if (!fgets(comm, sizeof(comm), c))
            comm[0] = '\0';
        fclose(c);
    }
    comm[strcspn(comm, "\n")] = '\0';
    sanitize_copy(name, sizeof(name), comm, 32);
    if (f->result == GO_UNSUPPORTED)
        fprintf(stderr, "parktrace: %s (pid %d) is Go %s, whose goroutines parktrace cannot read: no DWARF, and"
                        " a version its table does not hold (docs/go.md)\n", name, pid, gb.version);
    if (f->result == GO_READ) {
        f->layout = gb.layout;
        f->probed = tracer_attach_go(gt->tr, fd, name) == 0;
    }
    return f;
}

uint64_t go_tracker_program(int pid)
{
    char path[32];
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%d/exe", pid);
    if (stat(path, &st) || !S_ISREG(st.st_mode))
        return 0;
    return ((uint64_t)st.st_dev * 0x9E3779B97F4A7C15ull ^ (uint64_t)st.st_ino) | 1;
}

bool go_tracker_look(struct go_tracker *gt, int pid)
{
    char path[32];
    snprintf(path, sizeof(path), "/proc/%d/exe", pid);
    /* The process's own executable, as the kernel holds it: no path a
     * user could swap, and never a FIFO (nothing that is not a regular
     * file can be run). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return false;
    struct stat st;
    struct known_file *f = NULL;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode))
        f = known(gt, &st);
    if (!f && S_ISREG(st.st_mode))
        f = read_file(gt, fd, &st, pid);
    close(fd);
    if (!f || f->result == GO_NOT_GO)
        return false;
    if (f->result == GO_UNSUPPORTED)
        gt->stats.unsupported++;
    else if (!f->probed)
        gt->stats.refused++;
    else if (go_maps_set_layout(gt->tr, pid, &f->layout))
        gt->stats.processes++;
    return true;
}
