#include "jvm_tracker.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "csp.h"
#include "jvm_frames.h"
#include "jvm_objects.h"
#include "procmaps.h"
#include "unwind_tables.h"

#define MAX_JVMS 256
#define MAX_CANDIDATES 65536
#define MAX_JAVA_THREADS 16384
#define SETTLE_NS 2000000000ULL   /* a new process may map libjvm a moment after exec */

struct tracked {
    int pid;
    bool live;
    struct jvm j;
    struct jvm_layout l;
    struct jvm_frames frames;
    int *tids;
    int ntids;
};

struct candidate {
    int pid;
    bool settled;     /* a JVM, or no libjvm SETTLE_NS after first seen */
    uint64_t first_seen;
};

static struct tracer *tr;
static const struct pt_options *opts;
static struct tracked jvms[MAX_JVMS];
static int njvms;
static struct candidate *cands;
static int ncands;

void jvm_tracker_init(struct tracer *t, const struct pt_options *o)
{
    tr = t;
    opts = o;
    cands = calloc(MAX_CANDIDATES, sizeof(*cands));
}

static bool maps_libjvm(int pid)
{
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    FILE *f = fopen(path, "re");
    bool found = false;
    while (f && !found && fgets(line, sizeof(line), f))
        found = strstr(line, "/libjvm.so\n") != NULL;
    if (f)
        fclose(f);
    return found;
}

static void refresh(struct tracked *t);

/* Returns true when PID is settled: tracked, or reported as unreadable;
 * false when its JVM is still starting and should be looked at again. */
static bool start_tracking(int pid, bool last_chance)
{
    if (njvms == MAX_JVMS)
        return true;
    struct tracked *t = &jvms[njvms];
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    int rc = jvm_open(&t->j, pid);
    if (!rc)
        rc = jvm_layout_read(&t->j, &t->l);
    if (rc == 1 && !last_chance) {
        jvm_close(&t->j);
        return false;
    }
    if (rc) {
        /* Traced as far as possible: its waits stay futex rows. */
        fprintf(stderr, "parktrace: %s; its parks are shown as futex waits\n",
                rc == 1 ? "a JVM never finished starting" : t->j.error);
        jvm_close(&t->j);
        return true;
    }
    uint64_t size, osthread, os_tid;
    if (!jvm_type_size(&t->j, "JavaThread", &size) || !jvm_offset(&t->j, "JavaThread", "_osthread", &osthread) ||
        !jvm_offset(&t->j, "OSThread", "_thread_id", &os_tid)) {
        fprintf(stderr, "parktrace: JVM %d: vmStructs lacks JavaThread's size or OS thread; its parks are "
                        "shown as futex waits\n", pid);
        jvm_close(&t->j);
        return true;
    }
    struct pt_jvm_layout kl = {
        .thread_size = size,
        .thread_obj = t->l.thread_obj + t->l.handle_obj,
        .park_blocker = t->l.park_blocker,
        .oop_base = t->l.oop_base,
        .klass_base = t->l.klass_base,
        .klass = t->l.klass,
        .oop_shift = t->l.oop_shift,
        .klass_shift = t->l.klass_shift,
        .compressed_oops = t->l.compressed_oops,
        .compressed_klass = t->l.compressed_klass,
        .osthread = osthread,
        .os_tid = os_tid,
        .eetop = t->l.eetop,
    };
    /* Monitors: without these offsets only parks are recognised. */
    uint64_t pending, waiting, object;
    if (jvm_offset(&t->j, "JavaThread", "_current_pending_monitor", &pending) &&
        jvm_offset(&t->j, "JavaThread", "_current_waiting_monitor", &waiting) &&
        jvm_offset(&t->j, "ObjectMonitor", "_object", &object)) {
        kl.pending_monitor = pending;
        kl.waiting_monitor = waiting;
        kl.monitor_object = object;
    }
    uint32_t key = (uint32_t)pid;
    if (bpf_map_update_elem(tr->jvm_layouts_fd, &key, &kl, BPF_ANY)) {
        jvm_close(&t->j);
        return true;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "/proc/%d/root%s", pid, t->j.libjvm);
    tracer_attach_jvm(tr, path);
    /* Its stacks are walked by frame pointers, which name Java frames. */
    unwind_tables_add_process(pid);
    t->live = true;
    jvm_frames_open(&t->frames, &t->j, &t->l);
    if (!t->frames.preserve_fp)
        fprintf(stderr, "parktrace: JVM %d runs without -XX:+PreserveFramePointer: its Java stacks stop at "
                        "the first JIT-compiled frame; blockers, classes and times are complete. Restart it "
                        "with -XX:+PreserveFramePointer for whole stacks\n", pid);
    t->tids = calloc(MAX_JAVA_THREADS, sizeof(int));
    njvms++;
    refresh(t);
    return true;
}

static struct candidate *candidate(int pid, uint64_t now)
{
    for (int i = 0; i < ncands; i++)
        if (cands[i].pid == pid)
            return &cands[i];
    if (ncands == MAX_CANDIDATES)
        return NULL;
    cands[ncands] = (struct candidate){.pid = pid, .first_seen = now};
    return &cands[ncands++];
}

static void consider(int pid, uint64_t now)
{
    struct candidate *c = candidate(pid, now);
    if (!c || c->settled || pid == getpid())
        return;
    bool aged = now - c->first_seen > SETTLE_NS;
    if (maps_libjvm(pid))
        c->settled = start_tracking(pid, now - c->first_seen > 5 * SETTLE_NS);
    else
        c->settled = aged;
}

/* An exec starts a new program in an old process: look at it afresh. */
static void consider_again(int pid, uint64_t now)
{
    struct candidate *c = candidate(pid, now);
    if (!c)
        return;
    for (int i = 0; i < njvms; i++)
        if (jvms[i].pid == pid)
            return;   /* already tracked */
    c->settled = false;
    c->first_seen = now;
    consider(pid, now);
}

/* The processes that may be JVMs: those named, those followed, or all. */
static void discover(uint64_t now)
{
    if (opts->npids) {
        for (int i = 0; i < opts->npids; i++)
            consider(opts->pids[i], now);
    } else if (opts->command) {
        uint32_t key, next;
        bool first = true;
        while (!bpf_map_get_next_key(tr->traced_fd, first ? NULL : &key, &next)) {
            first = false;
            key = next;
            consider((int)key, now);
        }
    } else {
        /* System-wide: every process once, then only programs that exec,
         * each looked at until it maps libjvm or has aged. */
        static bool scanned;
        if (!scanned) {
            DIR *d = opendir("/proc");
            for (struct dirent *e; d && (e = readdir(d));)
                if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
                    consider(atoi(e->d_name), now);
            if (d)
                closedir(d);
            scanned = true;
        }
        uint32_t pid;
        while (!bpf_map_lookup_and_delete_elem(tr->execs_fd, NULL, &pid))
            consider_again((int)pid, now);
        for (int i = 0; i < ncands; i++)
            if (!cands[i].settled)
                consider(cands[i].pid, now);
    }
}

static bool has(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* Publishes the JVM's current threads; forgets threads that are gone. */
static void refresh(struct tracked *t)
{
    static int tids[MAX_JAVA_THREADS];
    static uint64_t threads[MAX_JAVA_THREADS];
    int n = jvm_java_threads(&t->j, tids, threads, MAX_JAVA_THREADS);
    if (n < 0) {
        n = 0;
        t->live = false;   /* exited: keep it for naming, drop its threads */
        uint32_t key = (uint32_t)t->pid;
        bpf_map_delete_elem(tr->jvm_layouts_fd, &key);
    }
    for (int i = 0; i < t->ntids; i++)
        if (!has(tids, n, t->tids[i])) {
            uint32_t key = (uint32_t)t->tids[i];
            bpf_map_delete_elem(tr->java_threads_fd, &key);
        }
    for (int i = 0; i < n; i++) {
        uint32_t key = (uint32_t)tids[i];
        uint64_t old;
        if (bpf_map_lookup_elem(tr->java_threads_fd, &key, &old) || old != threads[i])
            bpf_map_update_elem(tr->java_threads_fd, &key, &threads[i], BPF_ANY);
    }
    memcpy(t->tids, tids, (size_t)n * sizeof(int));
    t->ntids = n;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool enabled(void)
{
    return tr && options_trace_java(opts);
}

void jvm_tracker_discover_named(void)
{
    if (enabled() && (opts->npids || opts->command))
        discover(now_ns());
}

void jvm_tracker_tick(void)
{
    if (!enabled())
        return;
    discover(now_ns());
    for (int i = 0; i < njvms; i++)
        if (jvms[i].live)
            refresh(&jvms[i]);
}

bool jvm_tracker_class(int pid, uint64_t klass, char *name, size_t len, char *supers, size_t slen)
{
    for (int i = 0; i < njvms; i++)
        if (jvms[i].pid == pid) {
            if (!jvm_klass_name(&jvms[i].j, &jvms[i].l, klass, name, len))
                return false;
            jvm_klass_supers(&jvms[i].j, &jvms[i].l, klass, supers, slen);
            return true;
        }
    return false;
}

bool jvm_tracker_frame_name(int pid, uint64_t pc, uint64_t fp, const struct pt_sample *smp, char *out,
                            size_t len)
{
    for (int i = 0; i < njvms; i++) {
        if (jvms[i].pid != pid || !jvms[i].live)
            continue;
        struct jvm_frames *f = &jvms[i].frames;
        bool named = jvm_frames_name(f, &jvms[i].j, &jvms[i].l, pc, fp, smp, out, len);
        if (f->listener_tid && !f->listener_uncounted) {
            csp_uncount_thread(tr->procs_fd, tr->uncounted_fd, pid, f->listener_tid, f->listener_since);
            f->listener_uncounted = true;
        }
        return named;
    }
    return false;
}

void jvm_tracker_free(void)
{
    for (int i = 0; i < njvms; i++) {
        jvm_frames_close(&jvms[i].frames);
        jvm_close(&jvms[i].j);
        free(jvms[i].tids);
    }
    njvms = 0;
    free(cands);
    cands = NULL;
    ncands = 0;
}
