#include "bpf_stats.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>

#include "loader.h"
#include "parktrace.skel.h"

int bpf_stats_enable(void)
{
    return bpf_enable_stats(BPF_STATS_RUN_TIME);
}

void bpf_stats_programs(struct tracer *t, void (*seen)(void *ctx, const char *name, uint64_t runs, uint64_t ns),
                        void *ctx)
{
    struct bpf_program *prog;
    bpf_object__for_each_program(prog, t->skel->obj) {
        struct bpf_prog_info info = {0};
        uint32_t len = sizeof(info);
        int fd = bpf_program__fd(prog);
        /* a syscall program runs once at load, not per event */
        if (bpf_program__type(prog) == BPF_PROG_TYPE_SYSCALL)
            continue;
        if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
            continue;
        seen(ctx, bpf_program__name(prog), info.run_cnt, info.run_time_ns);
    }
}

unsigned long bpf_stats_maps_kb(struct tracer *t)
{
    /* Each map's memlock in /proc/self/fdinfo: what the kernel charges. */
    unsigned long total = 0;
    struct bpf_map *map;
    bpf_object__for_each_map(map, t->skel->obj) {
        char path[64], line[128];
        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", bpf_map__fd(map));
        FILE *fi = fopen(path, "re");
        unsigned long bytes;
        while (fi && fgets(line, sizeof(line), fi))
            if (sscanf(line, "memlock: %lu", &bytes) == 1)
                total += bytes;
        if (fi)
            fclose(fi);
    }
    return total / 1024;
}

void bpf_stats_counters(struct tracer *t, struct bpf_counters *out)
{
    const struct parktrace_bpf__bss *bss = t->skel->bss;
    *out = (struct bpf_counters){
        .lost_ends_recovered = bss->lost_ends_recovered,
        .drop_stacks_table = bss->drop_stacks_table,
        .drop_stacks_fp = bss->drop_stacks_fp,
        .drop_stacks_table_err = bss->drop_stacks_table_err,
        .drop_stacks_fp_err = bss->drop_stacks_fp_err,
        .safepoint_edges = t->skel->data->safepoint_gen - 1,
    };
}
