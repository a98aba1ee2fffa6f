/* hooks_floor [--self-stats]: attaches hooks_floor.bpf.c's two programs
 * until SIGINT or SIGTERM. With --self-stats it turns on the kernel's BPF
 * run-time statistics while it runs and prints, as parktrace --self-stats
 * does, "bpf_runs=N bpf_ns_per_run=M" for its programs at the end. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hooks_floor.skel.h"

static void add_runs(const struct bpf_program *prog, uint64_t *runs, uint64_t *ns)
{
    struct bpf_prog_info info;
    uint32_t len = sizeof(info);
    memset(&info, 0, sizeof(info));
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) {
        *runs += info.run_cnt;
        *ns += info.run_time_ns;
    }
}

int main(int argc, char **argv)
{
    int stats = argc == 2 && strcmp(argv[1], "--self-stats") == 0;
    if (argc > 2 || (argc == 2 && !stats)) {
        fprintf(stderr, "usage: hooks_floor [--self-stats]\n");
        return 2;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);

    int stats_fd = stats ? bpf_enable_stats(BPF_STATS_RUN_TIME) : -1;
    if (stats && stats_fd < 0) {
        fprintf(stderr, "hooks_floor: cannot turn on BPF statistics: %s\n", strerror(errno));
        return 1;
    }
    struct hooks_floor_bpf *skel = hooks_floor_bpf__open_and_load();
    if (!skel || hooks_floor_bpf__attach(skel)) {
        fprintf(stderr, "hooks_floor: cannot load or attach: %s\n", strerror(errno));
        hooks_floor_bpf__destroy(skel);
        return 1;
    }
    int sig;
    sigwait(&set, &sig);
    if (stats) {
        uint64_t runs = 0, ns = 0;
        add_runs(skel->progs.floor_switch, &runs, &ns);
        add_runs(skel->progs.floor_waking, &runs, &ns);
        fprintf(stderr, "hooks_floor: bpf_runs=%" PRIu64 " bpf_ns_per_run=%" PRIu64 "\n", runs,
                runs ? ns / runs : 0);
        close(stats_fd);
    }
    hooks_floor_bpf__destroy(skel);
    return 0;
}
