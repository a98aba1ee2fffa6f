#include "loader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cgroup_mount.h"
#include "gap_tables.h"
#include "links_close.h"
#include "parktrace.skel.h"
#include "preflight.h"
#include "sanitize.h"

_Static_assert(sizeof(struct pt_slot) % 8 == 0, "slot must be 8-byte sized for the array map");
_Static_assert(sizeof(struct pt_hot_counts) % sizeof(__u64) == 0, "hot counters are summed as words");

#define SLOTS_PIECE (2u << 20)   /* the blocker table is mapped 2 MiB at a time */

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    /* libbpf's own chatter only on request; parktrace prints one line. */
    if (level == LIBBPF_DEBUG || !getenv("PARKTRACE_DEBUG"))
        return 0;
    return vfprintf(stderr, fmt, ap);
}

static bool tracepoint_exists(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "/sys/kernel/tracing/events/syscalls/%s", name);
    if (access(path, F_OK) == 0)
        return true;
    snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/syscalls/%s", name);
    return access(path, F_OK) == 0;
}

/* A new sample only wakes the loop (the sample is in its map); a process
 * waiting for its unwind tables gets them now, and a new stack with Java
 * frames is named now. */
static int on_ready(void *ctx, void *data, size_t size)
{
    const struct pt_ready *ev = data;
    const struct tracer_ready *on = ((struct tracer *)ctx)->on_ready;
    if (size < sizeof(*ev) || !on)
        return 0;
    if (ev->what == PT_READY_UNWIND && on->unwind)
        on->unwind(on->ctx, (int)ev->tgid);
    else if (ev->what == PT_READY_STACK && on->stack)
        on->stack(on->ctx, (int)ev->tgid, ev->stack_id);
    else if (ev->what == PT_READY_KLASS && on->klass)
        on->klass(on->ctx, (int)ev->tgid, ev->klass);
    return 0;
}

/* The programs' constants and the maps' sizes, from the options. */
static void set_constants(struct parktrace_bpf *skel, const struct pt_options *o, bool follow)
{
    skel->rodata->filter_tgids = o->npids > 0 || o->command;
    skel->rodata->cgroup_filters = (uint32_t)o->ncgroups;
    skel->rodata->self_tgid = (uint32_t)getpid();
    skel->rodata->threshold = o->threshold;
    skel->rodata->max_slots = o->max_blockers;
    skel->rodata->trace_futex = o->kinds & (1u << PT_KIND_FUTEX);
    skel->rodata->trace_jvm_park = o->kinds & (1u << PT_KIND_JVM_PARK);
    skel->rodata->trace_jvm_monitor = o->kinds & (1u << PT_KIND_JVM_MONITOR);
    skel->rodata->trace_jvm_wait = o->kinds & (1u << PT_KIND_JVM_WAIT);
    skel->rodata->trace_java = options_trace_java(o);
    /* Wait chains are read only by the scheduler's probes (chains.bpf.h). */
    skel->rodata->trace_chains = o->chains > 0 && o->probes == PT_PROBES_SCHED;
    bpf_map__set_max_entries(skel->maps.slots, o->max_blockers);
    bpf_map__set_max_entries(skel->maps.slot_index, o->max_blockers);
    bpf_map__set_max_entries(skel->maps.free_ring, o->max_blockers);
    /* With the kernel's CFI walk, frame-pointer stacks are only a process's
     * first waits: a quarter of the table (4 MiB instead of 16). */
    if (o->unwind == PT_UNWIND_CFI)
        bpf_map__set_max_entries(skel->maps.stacks, 4096);
    /* --stacks sampled: stack walks within a budget per CPU. */
    skel->rodata->stack_budget_ns = o->stacks_all ? 0 : (uint64_t)(o->stack_budget * 1e9);
    gap_tables_fill((uint32_t *)skel->rodata->gap_log2_frac, PT_GAP_FRAC, (uint32_t *)skel->rodata->gap_scale,
                    PT_GAP_SCALES - 1);
    skel->rodata->time_runs = o->self_stats;
    /* A diagnostic for tools/bench, not an option: every part of the hot
     * programs timed, its clock reads in the figures (docs/self-stats.md). */
    const char *parts = getenv("PARKTRACE_TIME_PARTS");
    skel->rodata->time_parts = o->self_stats && parts && strcmp(parts, "1") == 0;
    skel->rodata->follow_children = follow;
    skel->rodata->cfi_unwind = o->unwind == PT_UNWIND_CFI;
}

/* Which programs load, from the kinds and probes chosen. Returns whether
 * the scheduler's programs do. */
static bool choose_programs(struct parktrace_bpf *skel, const struct pt_options *o, bool syscalls)
{
    bool futex = o->kinds & (1u << PT_KIND_FUTEX);
    bool waitv = syscalls && tracepoint_exists("sys_enter_futex_waitv");
    bool jvm_park = o->kinds & (1u << PT_KIND_JVM_PARK);
    bool uprobes = jvm_park && o->probes == PT_PROBES_UPROBES;
    /* With --probes uprobes, futex waits are still timed from the scheduler. */
    bool monitors = o->kinds & ((1u << PT_KIND_JVM_MONITOR) | (1u << PT_KIND_JVM_WAIT));
    bool sched = ((futex || monitors) && o->probes != PT_PROBES_SYSCALLS) ||
                 (jvm_park && o->probes == PT_PROBES_SCHED);
    skel->rodata->park_uprobes = uprobes;
    bpf_program__set_autoload(skel->progs.unsafe_park, uprobes);
    bpf_program__set_autoload(skel->progs.unsafe_park_exit, uprobes);
    bpf_program__set_autoload(skel->progs.unsafe_unpark, uprobes);
    bpf_program__set_autoload(skel->progs.java_thread_start, options_trace_java(o));
    bpf_program__set_autoload(skel->progs.go_semacquire, options_trace_go(o));
    bpf_program__set_autoload(skel->progs.go_park, options_trace_go(o));
    bpf_program__set_autoload(skel->progs.go_ready, options_trace_go(o));
    /* Parks timed from the scheduler keep their heap reads between safepoints. */
    bpf_program__set_autoload(skel->progs.jvm_safepoint, jvm_park && o->probes == PT_PROBES_SCHED);
    bpf_program__set_autoload(skel->progs.futex_enter, syscalls);
    bpf_program__set_autoload(skel->progs.futex_exit, syscalls);
    bpf_program__set_autoload(skel->progs.futex_waitv_enter, waitv);
    bpf_program__set_autoload(skel->progs.futex_waitv_exit, waitv);
    bpf_program__set_autoload(skel->progs.sched_switch, sched);
    bpf_program__set_autoload(skel->progs.sched_waking, sched);
    bpf_program__set_autoload(skel->progs.hrtimer_entry, sched);
    bpf_program__set_autoload(skel->progs.hrtimer_exit, sched);
    bpf_program__set_autoload(skel->progs.find_hrtimer_wakeup, sched);
    bpf_program__set_autoload(skel->progs.exec_unwind, o->unwind == PT_UNWIND_CFI);
    /* New programs are checked for a JVM or Go only when tracing system-wide. */
    bpf_program__set_autoload(skel->progs.exec_seen, !o->npids && !o->command && options_trace_runtimes(o));
    return sched;
}

/* The blocker table mapped, its first slots at once. 0, or -1. */
static int map_table(struct tracer *t, uint32_t nslots)
{
    t->nslots = nslots;
    t->slots_len = ((size_t)t->nslots * sizeof(struct pt_slot) + 4095) & ~(size_t)4095;
    /* The kernel maps a BPF array's pages into the process at once, all
     * of them resident: the table is mapped in pieces as its slots are
     * handed out (tracer_used_slots), over a reserved range that reads as
     * zeros (a slot never handed out is not valid) and costs no memory. */
    t->slots = mmap(NULL, t->slots_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    t->slots_fd = bpf_map__fd(t->skel->maps.slots);
    /* The ring of slots given back, a word a slot, mapped whole. */
    t->free_ring_len = ((size_t)nslots * sizeof(uint64_t) + 4095) & ~(size_t)4095;
    t->free_ring = mmap(NULL, t->free_ring_len, PROT_READ | PROT_WRITE, MAP_SHARED,
                        bpf_map__fd(t->skel->maps.free_ring), 0);
    if (t->free_ring == MAP_FAILED) {
        t->free_ring = NULL;
        return -1;
    }
    if (t->slots != MAP_FAILED && tracer_map_slots(t, 1))
        return 0;
    if (t->slots == MAP_FAILED)
        t->slots = NULL;
    return -1;
}

/* The maps the layers above ask the kernel/ files about. */
static void take_fds(struct tracer *t)
{
    struct parktrace_bpf *skel = t->skel;
    t->stack_time_fd = bpf_map__fd(skel->maps.stack_time);
    t->waker_time_fd = bpf_map__fd(skel->maps.waker_time);
    t->chain_time_fd = bpf_map__fd(skel->maps.chain_time);
    t->chain_comms_fd = bpf_map__fd(skel->maps.chain_comms);
    t->chain_kstacks_fd = bpf_map__fd(skel->maps.chain_kstacks);
    t->stacks_fd = bpf_map__fd(skel->maps.stacks);
    t->samples_fd = bpf_map__fd(skel->maps.samples);
    t->ustacks_fd = bpf_map__fd(skel->maps.ustacks);
    t->unwind_bins_fd = bpf_map__fd(skel->maps.unwind_bins);
    t->unwind_procs_fd = bpf_map__fd(skel->maps.unwind_procs);
    t->traced_fd = bpf_map__fd(skel->maps.traced);
    t->jvm_layouts_fd = bpf_map__fd(skel->maps.jvm_layouts);
    t->go_layouts_fd = bpf_map__fd(skel->maps.go_layouts);
    t->java_threads_fd = bpf_map__fd(skel->maps.java_threads);
    t->execs_fd = bpf_map__fd(skel->maps.execs);
    t->procs_fd = bpf_map__fd(skel->maps.procs);
    t->uncounted_fd = bpf_map__fd(skel->maps.uncounted);
    t->unwatched_life_fd = bpf_map__fd(skel->maps.unwatched_life);
    t->exited_life_fd = bpf_map__fd(skel->maps.exited_life);
}

/* Closes what was made and says why in one line: -1 for the caller. */
static int open_failed(struct tracer *t, const char *what, int err)
{
    fprintf(stderr, "parktrace: %s: %s%s\n", what, strerror(err),
            err == EPERM ? " (needs root, or CAP_BPF and CAP_PERFMON)" : "");
    tracer_close(t);
    return -1;
}

static void close_all(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

/* The --cgroup directories, opened into FDS before anything is loaded: a
 * path that is no cgroup is one line and no tracing. 0, or -1. */
static int open_cgroups(const struct pt_options *o, int *fds)
{
    for (int i = 0; i < o->ncgroups; i++) {
        fds[i] = cgroup_dir_open(o->cgroups[i]);
        if (fds[i] >= 0)
            continue;
        char mnt[256] = "";
        int err = errno;
        if (err == ENODEV || !cgroup_v2_mount(mnt, sizeof(mnt)))
            fprintf(stderr, "parktrace: --cgroup needs the cgroup v2 hierarchy, and this machine mounts none\n");
        else
            fprintf(stderr, "parktrace: --cgroup %.200s: no such cgroup under %s (cgroup v2): %s\n", o->cgroups[i],
                    mnt, strerror(err));
        close_all(fds, i);
        return -1;
    }
    return 0;
}

/* Puts the cgroups' descriptors in the kernel's filter, and closes them
 * (the map holds the cgroups). 0, or -1. */
static int fill_cgroup_filter(struct tracer *t, int *fds, int n)
{
    int fd = bpf_map__fd(t->skel->maps.cgroup_filter), rc = 0;
    for (uint32_t i = 0; i < (uint32_t)n && !rc; i++)
        if (bpf_map_update_elem(fd, &i, &fds[i], BPF_ANY))
            rc = -errno;
    close_all(fds, n);
    return rc;
}

int tracer_open(struct tracer *t, const struct pt_options *o, bool follow)
{
    int cgroup_fds[PT_MAX_CGROUPS];
    memset(t, 0, sizeof(*t));
    libbpf_set_print(libbpf_quiet);
    bool syscalls = (o->kinds & (1u << PT_KIND_FUTEX)) && o->probes == PT_PROBES_SYSCALLS;
    /* Only the syscall tracepoints need tracefs; tp_btf programs do not. */
    if (syscalls && preflight_tracefs())
        return -1;
    if (open_cgroups(o, cgroup_fds))
        return -1;
    if (!(t->skel = parktrace_bpf__open())) {
        fprintf(stderr, "parktrace: cannot open the BPF object: %s\n", strerror(errno));
        close_all(cgroup_fds, o->ncgroups);
        return -1;
    }
    set_constants(t->skel, o, follow);
    bool sched = choose_programs(t->skel, o, syscalls);
    t->idle_sleeps = sched;
    t->stacks_sampled = !o->stacks_all;
    int err = parktrace_bpf__load(t->skel);
    if (err) {
        close_all(cgroup_fds, o->ncgroups);
        return open_failed(t, "the kernel refused the BPF programs", -err);
    }
    if ((err = fill_cgroup_filter(t, cgroup_fds, o->ncgroups)))
        return open_failed(t, "cannot set the --cgroup filter", -err);
    if (map_table(t, o->max_blockers))
        return open_failed(t, "cannot map the blocker table", errno);
    take_fds(t);
    t->sample_ready = ring_buffer__new(bpf_map__fd(t->skel->maps.sample_ready), on_ready, t, NULL);
    if (!t->sample_ready)
        return open_failed(t, "cannot open the sample ring buffer", errno);
    for (int i = 0; i < o->npids; i++)
        tracer_add_pid(t, o->pids[i]);
    if (sched) {
        /* Tells the timer probe which expiring timers wake a sleeping thread;
         * on failure every timer does, a coarser but safe rule. */
        LIBBPF_OPTS(bpf_test_run_opts, run);
        bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.find_hrtimer_wakeup), &run);
    }
    return 0;
}

int tracer_attach(struct tracer *t)
{
    int err = parktrace_bpf__attach(t->skel);
    if (err)
        fprintf(stderr, "parktrace: cannot attach the probes: %s\n", strerror(-err));
    return err ? -1 : 0;
}

int tracer_add_pid(struct tracer *t, int pid)
{
    uint32_t key = (uint32_t)pid;
    uint8_t one = 1;
    return bpf_map_update_elem(t->traced_fd, &key, &one, BPF_ANY);
}

/* Maps the table's first N slots, at least, in 2 MiB pieces. */
bool tracer_map_slots(struct tracer *t, uint32_t n)
{
    size_t want = (size_t)n * sizeof(struct pt_slot);
    if (want <= t->slots_mapped)
        return true;
    want = (want + SLOTS_PIECE - 1) / SLOTS_PIECE * SLOTS_PIECE;
    want = want < t->slots_len ? want : t->slots_len;
    void *at = mmap((char *)t->slots + t->slots_mapped, want - t->slots_mapped, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_FIXED, t->slots_fd, (off_t)t->slots_mapped);
    if (at == MAP_FAILED) {
        if (!t->slots_map_failed++)
            fprintf(stderr, "parktrace: cannot map more of the blocker table: %s; blockers past slot %zu"
                            " are not reported\n", strerror(errno), t->slots_mapped / sizeof(struct pt_slot));
        return false;
    }
    t->slots_mapped = want;
    return true;
}

uint32_t tracer_used_slots(struct tracer *t)
{
    uint64_t n = __atomic_load_n(&t->skel->bss->next_slot, __ATOMIC_ACQUIRE);
    uint32_t used = n < t->nslots ? (uint32_t)n : t->nslots;
    tracer_map_slots(t, used);
    size_t mapped = t->slots_mapped / sizeof(struct pt_slot);
    return used < mapped ? used : (uint32_t)mapped;
}

uint64_t tracer_drop(const struct tracer *t, int which)
{
    return __atomic_load_n(&t->skel->bss->drops[which], __ATOMIC_RELAXED);
}

/* The one entry of per-CPU array MAP, SIZE bytes a CPU, for every possible
 * CPU (*NCPUS of them): to be freed; NULL when it cannot be read. */
static void *percpu_entry(const struct bpf_map *map, size_t size, int *ncpus)
{
    *ncpus = libbpf_num_possible_cpus();
    void *per = *ncpus > 0 ? calloc((size_t)*ncpus, size) : NULL;
    uint32_t zero = 0;
    if (per && bpf_map_lookup_elem(bpf_map__fd(map), &zero, per) != 0) {
        free(per);
        return NULL;
    }
    return per;
}

void tracer_hot_counts(const struct tracer *t, struct pt_hot_counts *sum)
{
    memset(sum, 0, sizeof(*sum));
    int ncpus;
    struct pt_hot_counts *per = percpu_entry(t->skel->maps.hot_counts, sizeof(*per), &ncpus);
    /* Every field is a __u64: summed word by word. */
    for (int c = 0; per && c < ncpus; c++)
        for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
            ((__u64 *)sum)[i] += ((const __u64 *)&per[c])[i];
    free(per);
}

uint64_t tracer_budget_spent_max(const struct tracer *t, bool chains)
{
    int ncpus;
    struct pt_budget *per =
        percpu_entry(chains ? t->skel->maps.chain_budget : t->skel->maps.stack_budget, sizeof(*per), &ncpus);
    uint64_t most = 0;
    for (int c = 0; per && c < ncpus; c++)
        most = per[c].spent > most ? per[c].spent : most;
    free(per);
    return most;
}

uint64_t tracer_chains_unread(const struct tracer *t)
{
    int ncpus;
    struct pt_budget *per = percpu_entry(t->skel->maps.chain_budget, sizeof(*per), &ncpus);
    uint64_t sum = 0;
    for (int c = 0; per && c < ncpus; c++)
        sum += per[c].refused;
    free(per);
    return sum;
}

void tracer_set_run_start(struct tracer *t, uint64_t now)
{
    __atomic_store_n(&t->skel->bss->run_start_ns, now, __ATOMIC_RELEASE);
}

void tracer_start_window(struct tracer *t, uint64_t now)
{
    __atomic_store_n(&t->skel->bss->window_start_ns, now, __ATOMIC_RELEASE);
    __atomic_add_fetch(&t->skel->data->window_gen, 1, __ATOMIC_RELEASE);
}

/* Attaches one program to FUNC in the file at PATH (a libjvm, a Go
 * program), for every process that maps it: at file offset OFFSET when
 * given (a stripped Go program's, found in its own function table), else
 * where its symbol table says. */
static int attach_file_probe(struct tracer *t, struct bpf_program *prog, bool ret, const char *path,
                            const char *name, const char *func, uint64_t offset)
{
    if (t->nlinks == TRACER_MAX_LINKS)
        return -1;
    LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = offset ? NULL : func, .retprobe = ret);
    struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, -1, path, offset, &opts);
    if (!link) {
        fprintf(stderr, "parktrace: cannot attach a uprobe to %s in %s: %s\n", func, name, strerror(errno));
        return -1;
    }
    t->links[t->nlinks++] = link;
    return 0;
}

/* The file open at FD among FILES (*N of at most CAP; WHAT names them in
 * messages, NAME the file): its record, and *FRESH when added now, PATH
 * then naming it through the descriptor (libbpf reads its symbols and the
 * kernel finds its inode there: no path that could be swapped for a FIFO
 * meanwhile). NULL after one line when it cannot be probed. */
static struct tracer_probed_file *probed_file(struct tracer_probed_file *files, int *n, int cap, int fd,
                                              const char *what, const char *name, bool *fresh, char *path,
                                              size_t len)
{
    struct stat st;
    if (fstat(fd, &st)) {
        fprintf(stderr, "parktrace: cannot put uprobes on %s: %s\n", name, strerror(errno));
        return NULL;
    }
    *fresh = false;
    for (int i = 0; i < *n; i++)
        if (files[i].dev == st.st_dev && files[i].ino == st.st_ino)
            return &files[i];
    if (*n == cap) {
        fprintf(stderr, "parktrace: more than %d different %s; %s is not probed\n", cap, what, name);
        return NULL;
    }
    *fresh = true;
    snprintf(path, len, "/proc/self/fd/%d", fd);
    files[*n] = (struct tracer_probed_file){.dev = st.st_dev, .ino = st.st_ino, .result = -1};
    return &files[(*n)++];
}

/* A libjvm's probes (tracer_attach_jvm), at PATH. */
static int attach_jvm_probes(struct tracer *t, const char *path, const char *name)
{
    if (attach_file_probe(t, t->skel->progs.java_thread_start, false, path, name, "_ZN10JavaThread3runEv", 0))
        return -1;
    /* Both ends of a safepoint, or neither counts. */
    int safepoints = bpf_program__autoload(t->skel->progs.jvm_safepoint) &&
                     !attach_file_probe(t, t->skel->progs.jvm_safepoint, false, path, name,
                                        "_ZN20SafepointSynchronize5beginEv", 0) &&
                     !attach_file_probe(t, t->skel->progs.jvm_safepoint, false, path, name,
                                        "_ZN20SafepointSynchronize3endEv", 0);
    if (!bpf_program__autoload(t->skel->progs.unsafe_park))
        return safepoints;
    if (attach_file_probe(t, t->skel->progs.unsafe_park, false, path, name, "Unsafe_Park", 0) ||
        attach_file_probe(t, t->skel->progs.unsafe_park_exit, true, path, name, "Unsafe_Park", 0) ||
        attach_file_probe(t, t->skel->progs.unsafe_unpark, false, path, name, "Unsafe_Unpark", 0))
        return -1;
    return safepoints;
}

int tracer_attach_jvm(struct tracer *t, int fd, const char *libjvm)
{
    char name[256], path[32];
    bool fresh;
    if (!t->skel || !bpf_program__autoload(t->skel->progs.java_thread_start))
        return 0;
    sanitize_copy(name, sizeof(name), libjvm, 200);     /* the JVM's owner chose it */
    struct tracer_probed_file *file = probed_file(t->jvm_files, &t->njvm_files, TRACER_MAX_JVMS, fd, "libjvm files",
                                                  name, &fresh, path, sizeof(path));
    if (file && fresh)
        file->result = attach_jvm_probes(t, path, name);
    return file ? file->result : -1;
}

int tracer_attach_go(struct tracer *t, int fd, const char *exe, const uint64_t offset[3])
{
    char name[256], path[32];
    bool fresh;
    if (!t->skel || !bpf_program__autoload(t->skel->progs.go_park))
        return -1;
    sanitize_copy(name, sizeof(name), exe, 200);     /* the program's owner chose it */
    struct tracer_probed_file *file = probed_file(t->go_files, &t->ngo_files, TRACER_MAX_GO_FILES, fd,
                                                  "Go programs", name, &fresh, path, sizeof(path));
    if (file && fresh)
        file->result =
            attach_file_probe(t, t->skel->progs.go_semacquire, false, path, name, "runtime.semacquire1", offset[0]) ||
            attach_file_probe(t, t->skel->progs.go_park, false, path, name, "runtime.gopark", offset[1]) ||
            attach_file_probe(t, t->skel->progs.go_ready, false, path, name, "runtime.goready", offset[2]) ? -1 : 0;
    return file ? file->result : -1;
}

int tracer_sample_ready_fd(const struct tracer *t)
{
    return ring_buffer__epoll_fd(t->sample_ready);
}

void tracer_sample_ready_drain(struct tracer *t, const struct tracer_ready *on)
{
    t->on_ready = on;
    ring_buffer__consume(t->sample_ready);
    t->on_ready = NULL;
}

void tracer_close(struct tracer *t)
{
    if (t->sample_ready)
        ring_buffer__free(t->sample_ready);
    /* The JVMs' uprobes and the skeleton's programs, detached at once. */
    struct bpf_link **links[TRACER_MAX_LINKS + sizeof(t->skel->links) / sizeof(struct bpf_link *)];
    int n = 0;
    for (int i = 0; i < t->nlinks; i++)
        links[n++] = &t->links[i];
    const struct bpf_object_skeleton *os = t->skel ? t->skel->skeleton : NULL;
    for (int i = 0; os && i < os->prog_cnt && n < (int)(sizeof(links) / sizeof(links[0])); i++)
        if (os->progs[i].link && *os->progs[i].link)
            links[n++] = os->progs[i].link;
    links_close_all(links, n);
    if (t->slots)
        munmap(t->slots, t->slots_len);
    if (t->free_ring)
        munmap(t->free_ring, t->free_ring_len);
    if (t->skel)
        parktrace_bpf__destroy(t->skel);
    memset(t, 0, sizeof(*t));
}

void tracer_layouts_changed(struct tracer *t)
{
    __atomic_add_fetch(&t->skel->data->layouts_gen, 1, __ATOMIC_RELEASE);
}

volatile uint32_t *tracer_procs_gen(struct tracer *t)
{
    return &t->skel->data->procs_gen;
}

volatile uint32_t *tracer_unwind_gen(struct tracer *t)
{
    return t->skel ? &t->skel->data->unwind_gen : NULL;
}
