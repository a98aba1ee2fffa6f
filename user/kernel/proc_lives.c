#include "proc_lives.h"

#include <bpf/bpf.h>

#include "loader.h"

struct proc_lives proc_lives_of(struct tracer *t)
{
    return (struct proc_lives){t->procs_fd, t->unwatched_life_fd, t->uncounted_fd, t->exited_life_fd,
                               tracer_procs_gen(t)};
}

bool proc_lives_enter(const struct proc_lives *pl, int pid)
{
    struct pt_proc zero = {0};
    uint32_t key = (uint32_t)pid;
    return bpf_map_update_elem(pl->procs_fd, &key, &zero, BPF_NOEXIST) == 0;
}

bool proc_lives_read(const struct proc_lives *pl, int pid, struct pt_proc *out)
{
    uint32_t key = (uint32_t)pid;
    return bpf_map_lookup_elem(pl->procs_fd, &key, out) == 0;
}

void proc_lives_write(const struct proc_lives *pl, int pid, const struct pt_proc *pr)
{
    uint32_t key = (uint32_t)pid;
    bpf_map_update_elem(pl->procs_fd, &key, pr, BPF_EXIST);
}

void proc_lives_forget(const struct proc_lives *pl, int pid)
{
    uint32_t key = (uint32_t)pid;
    bpf_map_delete_elem(pl->procs_fd, &key);
}

bool proc_lives_take_unwatched(const struct proc_lives *pl, int pid, uint64_t *died_ns)
{
    uint32_t key = (uint32_t)pid;
    return bpf_map_lookup_and_delete_elem(pl->unwatched_fd, &key, died_ns) == 0;
}

bool proc_lives_take_exited(const struct proc_lives *pl, int pid, uint64_t *lived_ns)
{
    uint32_t key = (uint32_t)pid;
    return pl->exited_fd >= 0 && bpf_map_lookup_and_delete_elem(pl->exited_fd, &key, lived_ns) == 0;
}

void proc_lives_changed(const struct proc_lives *pl)
{
    if (pl->gen)
        __atomic_add_fetch(pl->gen, 1, __ATOMIC_RELAXED);
}

void proc_lives_uncount_thread(const struct proc_lives *pl, int pid, int tid, uint64_t since)
{
    uint32_t t = (uint32_t)tid;
    uint8_t one = 1;
    struct pt_proc pr;
    /* Marked first, so its exit is not counted once more. */
    if (bpf_map_update_elem(pl->uncounted_fd, &t, &one, BPF_ANY) || !proc_lives_read(pl, pid, &pr))
        return;
    pr.threads -= 1;
    pr.births_ns -= since;
    proc_lives_write(pl, pid, &pr);
    /* Its sleeps are no idle time of the process either, from its next on. */
    proc_lives_changed(pl);
}
