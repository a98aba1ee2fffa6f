#include "jvm_maps.h"

#include <bpf/bpf.h>

#include "loader.h"

bool jvm_maps_set_layout(struct tracer *t, int pid, const struct pt_jvm_layout *kl, bool must_exist)
{
    uint32_t key = (uint32_t)pid;
    if (bpf_map_update_elem(t->jvm_layouts_fd, &key, kl, must_exist ? BPF_EXIST : BPF_ANY))
        return false;
    tracer_layouts_changed(t);
    return true;
}

bool jvm_maps_get_layout(struct tracer *t, int pid, struct pt_jvm_layout *out)
{
    uint32_t key = (uint32_t)pid;
    return bpf_map_lookup_elem(t->jvm_layouts_fd, &key, out) == 0;
}

void jvm_maps_drop_layout(struct tracer *t, int pid)
{
    uint32_t key = (uint32_t)pid;
    bpf_map_delete_elem(t->jvm_layouts_fd, &key);
    tracer_layouts_changed(t);
}

void jvm_maps_set_thread(struct tracer *t, int tid, uint64_t thread)
{
    uint32_t key = (uint32_t)tid;
    uint64_t old;
    /* Written only when it changed: a refresh lists every thread. */
    bool known = bpf_map_lookup_elem(t->java_threads_fd, &key, &old) == 0;
    if (known && old == thread)
        return;
    bpf_map_update_elem(t->java_threads_fd, &key, &thread, BPF_ANY);
    /* A thread attached again has another JavaThread: the one its park
     * cache holds (jvm.bpf.h java_wait_key) must not be read any more. */
    if (known)
        tracer_layouts_changed(t);
}

void jvm_maps_drop_thread(struct tracer *t, int tid)
{
    uint32_t key = (uint32_t)tid;
    /* Detached, its thread may wait again as a native one: as above. */
    if (bpf_map_delete_elem(t->java_threads_fd, &key) == 0)
        tracer_layouts_changed(t);
}

bool jvm_maps_next_traced(struct tracer *t, const uint32_t *prev, uint32_t *next)
{
    return bpf_map_get_next_key(t->traced_fd, prev, next) == 0;
}

bool jvm_maps_take_exec(struct tracer *t, uint32_t *pid)
{
    return bpf_map_lookup_and_delete_elem(t->execs_fd, NULL, pid) == 0;
}
