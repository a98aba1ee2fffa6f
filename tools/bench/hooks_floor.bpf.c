/* Two programs that do no work on parktrace's default hooks (tp_btf
 * sched_switch and sched_waking): one per-CPU count each, so that neither
 * is empty. What the hooks alone cost a workload, and the BPF run time the
 * kernel's own statistics give a program that does nothing there: the
 * floor under any tracer built on these hooks (tools/bench/bench.py). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 2);
    __type(key, __u32);
    __type(value, __u64);
} runs SEC(".maps");

static __always_inline void count(__u32 which)
{
    __u64 *n = bpf_map_lookup_elem(&runs, &which);
    if (n)
        (*n)++;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_switch)
{
    count(0);
    return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(floor_waking)
{
    count(1);
    return 0;
}
