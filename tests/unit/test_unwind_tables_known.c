/* The unwind tables' list of binaries stays bounded however many distinct
 * binaries processes map over a run (a build host makes new ones all day,
 * a user can write any number): a process's publishing opens at most
 * 1 024 files, those with no table not met lately are forgotten for room,
 * one user's take at most an eighth, and a binary of root's mapped after
 * all of them still gets its table. Real kernel maps, real files
 * mapped into this very process. */
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../bpf/parktrace.h"
#include "check.h"
#include "elfsyms.h"
#include "procmaps.h"
#include "tiny_elf.h"
#include "unwind_maps.h"
#include "unwind_tables.h"

static char dir[] = "/tmp/pt-unwind-known-XXXXXX";

/* The kernel maps unwind.bpf.h declares, made as libbpf would. */
static bool make_maps(int *bins, int *procs)
{
    LIBBPF_OPTS(bpf_map_create_opts, inner_opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
    int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_unwind_row", 4, 8, 1, &inner_opts);
    LIBBPF_OPTS(bpf_map_create_opts, outer_opts, .inner_map_fd = inner);
    *bins = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "t_unwind_bins", 4, 4, PT_UNWIND_BINS, &outer_opts);
    if (inner >= 0)
        close(inner);
    LIBBPF_OPTS(bpf_map_create_opts, procs_opts, .map_flags = BPF_F_NO_PREALLOC);
    *procs = bpf_map_create(BPF_MAP_TYPE_HASH, "t_unwind_procs", 4, sizeof(struct pt_uproc), 4096, &procs_opts);
    return *bins >= 0 && *procs >= 0;
}

/* Maps N new files (FIRST, ...) of owner UID into this process; their
 * addresses into AT. */
static int map_new_files(int first, int n, uid_t uid, void **at)
{
    int mapped = 0;
    for (int i = 0; i < n; i++) {
        char path[96];
        snprintf(path, sizeof(path), "%s/b%d", dir, first + i);
        at[i] = MAP_FAILED;
        if (!tiny_elf_write(path, 0755, uid))
            continue;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        at[i] = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
        close(fd);
        mapped += at[i] != MAP_FAILED;
    }
    return mapped;
}

static void unmap_all(void **at, int n)
{
    for (int i = 0; i < n; i++)
        if (at[i] != MAP_FAILED)
            munmap(at[i], 4096);
}

/* Maps a fresh copy of a real binary of root's, with CFI: a new inode. */
static void *map_real_binary(const char *name)
{
    char path[96], cmd[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(cmd, sizeof(cmd), "cp /bin/true %s && chmod 0755 %s", path, path);
    if (system(cmd) != 0)
        return MAP_FAILED;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    void *p = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    return p;
}

/* This process's maps read again (however often: a real process's are
 * read a few times at most) and published. */
static void publish_self(struct unwind_tables *ut, struct pm_proc *self)
{
    self->rereads = 0;
    unwind_tables_add_process(ut, getpid());
}

int main(void)
{
    int bins, procs;
    if (!REQUIRE(getuid() == 0, "run as root (it owns files as nobody)") ||
        !REQUIRE(make_maps(&bins, &procs), "kernel maps (BPF)") || !REQUIRE(mkdtemp(dir), "temporary directory"))
        return CHECK_DONE();
    struct elfsyms *es = elfsyms_new();
    struct procmaps *maps = procmaps_new(es);
    struct unwind_tables *ut = unwind_tables_new(&(struct unwind_maps){.bins_fd = bins, .procs_fd = procs}, NULL, maps);
    struct unwind_tables_usage u;
    enum { BATCH = 1000, OWNER_SHARE = UNWIND_TABLES_MAX_KNOWN / 8 };
    static void *at[2 * BATCH];
    struct pm_proc *self = procmaps_get(maps, getpid());

    /* This process's own libraries first: known before the counts below. */
    publish_self(ut, self);

    /* One process's publishing opens at most 1 024 files. */
    int n = map_new_files(0, 2 * BATCH, (uid_t)-1, at);
    publish_self(ut, self);
    unwind_tables_usage(ut, &u);
    CHECK(n == 2 * BATCH && u.files_skipped > 0 && u.known <= 1024 + 64,
          "a process of %d files has at most 1 024 looked at (%zu known, %zu skipped)", n, u.known, u.files_skipped);
    unmap_all(at, n);

    /* A user's binaries, more than its share, met within a few seconds:
     * past the share, its new ones are refused, none forgotten. */
    size_t before = u.known;
    int mapped = 0;
    for (int b = 0; b < OWNER_SHARE / BATCH + 2; b++) {
        mapped += n = map_new_files(10000 + b * BATCH, BATCH, 65534, at);
        publish_self(ut, self);
        unmap_all(at, n);
    }
    unwind_tables_usage(ut, &u);
    CHECK(mapped > OWNER_SHARE, "nobody's files mapped (%d)", mapped);
    CHECK(u.known - before <= OWNER_SHARE, "one user's binaries take at most an eighth (%zu known)", u.known - before);
    CHECK(u.owner_refused > 0, "its binaries past its share are refused (%zu)", u.owner_refused);

    /* Root's binaries (no CFI), more than the list holds, each met once:
     * those not met lately are forgotten for room. */
    unwind_tables_set_forget_after(ut, 1);
    size_t most = 0;
    int all = 0;
    for (int b = 0; b < UNWIND_TABLES_MAX_KNOWN / BATCH + 10; b++) {
        all += n = map_new_files(100000 + b * BATCH, BATCH, (uid_t)-1, at);
        publish_self(ut, self);
        unwind_tables_usage(ut, &u);
        most = u.known > most ? u.known : most;
        unmap_all(at, n);
    }
    CHECK(all > UNWIND_TABLES_MAX_KNOWN, "root's files mapped (%d)", all);
    CHECK(most <= UNWIND_TABLES_MAX_KNOWN, "binaries known at once stay within %d (%zu)", UNWIND_TABLES_MAX_KNOWN,
          most);
    CHECK(u.forgotten > 0, "those without a table were forgotten for room (%zu)", u.forgotten);

    /* Past all of them, a binary of root's with CFI gets its table. */
    size_t tables = u.binaries;
    void *real = map_real_binary("true-copy");
    if (REQUIRE(real != MAP_FAILED, "a copy of /bin/true mapped")) {
        publish_self(ut, self);
        unwind_tables_usage(ut, &u);
        CHECK(u.binaries > tables, "a binary mapped after them all gets its table (%zu, was %zu)", u.binaries,
              tables);
    }

    unwind_tables_free(ut);
    procmaps_free(maps);
    elfsyms_free(es);
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return CHECK_DONE();
}
