/* A process's list of tables written after its exit (a publishing that
 * raced it: its maps read while it lived, its builds ended after it was
 * gone) was never deleted, and its tables were never let go: under load, a
 * user's short-lived programs spent the user's share for good. The walk
 * over the lists deletes those of processes gone and passes on the rest.
 * A real kernel map, a real process that has exited. */
#include <bpf/bpf.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bpf/parktrace.h"
#include "check.h"
#include "unwind_maps.h"

struct seen {
    int lists;
    uint32_t bins[2];
};

static void note(void *ctx, const struct pt_uproc *up)
{
    struct seen *s = ctx;
    if (s->lists < 2)
        s->bins[s->lists] = up->m[0].bin;
    s->lists++;
}

/* A pid no process has: a child's, once reaped. */
static pid_t reaped_child(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    while (pid > 0 && waitpid(pid, NULL, 0) < 0)
        ;
    return pid;
}

static void set_list(int fd, uint32_t tgid, uint32_t bin)
{
    static struct pt_uproc up;
    up.n = 1;
    up.m[0].bin = bin;
    bpf_map_update_elem(fd, &tgid, &up, BPF_ANY);
}

int main(void)
{
    LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
    int procs = bpf_map_create(BPF_MAP_TYPE_HASH, "t_unwind_procs", 4, sizeof(struct pt_uproc), 4096, &opts);
    pid_t gone = reaped_child();
    if (!REQUIRE(procs >= 0, "a kernel map (BPF, as root)") || !REQUIRE(gone > 0, "a child that exited"))
        return CHECK_DONE();
    set_list(procs, (uint32_t)getpid(), 7);
    set_list(procs, (uint32_t)gone, 9);

    struct unwind_maps um = {.bins_fd = -1, .procs_fd = procs};
    static struct pt_uproc scratch;
    struct seen s = {0};
    bool whole = unwind_maps_each_proc(&um, 100, &scratch, note, &s);
    CHECK(whole, "the walk reaches the end");
    CHECK(s.lists == 1 && s.bins[0] == 7, "only the live process's list is passed on (%d lists, first bin %u)",
          s.lists, s.bins[0]);
    uint32_t key = (uint32_t)gone, live = (uint32_t)getpid();
    CHECK(bpf_map_lookup_elem(procs, &key, &scratch) != 0, "the list of the process gone is deleted");
    CHECK(bpf_map_lookup_elem(procs, &live, &scratch) == 0, "the live process's list stays");
    close(procs);
    return CHECK_DONE();
}
