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
#include "monotonic.h"
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

/* The code heaps (CodeCache::_heaps, a GrowableArray<CodeHeap*>) and the
 * offsets that lead from a pc to its code blob's frame size. */
static void code_heaps(struct jvm *j, struct pt_jvm_layout *kl)
{
    uint64_t a_heaps, arr, data, o_len, o_data, o_mem, o_segmap, o_log2, o_low, o_lob, o_hib, hb, fs;
    int32_t n;
    if (!jvm_static(j, "CodeCache", "_heaps", &a_heaps) || !jvm_offset(j, "GrowableArrayBase", "_len", &o_len) ||
        !jvm_offset(j, "GrowableArray<int>", "_data", &o_data) || !jvm_offset(j, "CodeHeap", "_memory", &o_mem) ||
        !jvm_offset(j, "CodeHeap", "_segmap", &o_segmap) ||
        !jvm_offset(j, "CodeHeap", "_log2_segment_size", &o_log2) ||
        !jvm_offset(j, "VirtualSpace", "_low", &o_low) ||
        !jvm_offset(j, "VirtualSpace", "_low_boundary", &o_lob) ||
        !jvm_offset(j, "VirtualSpace", "_high_boundary", &o_hib) || !jvm_type_size(j, "HeapBlock", &hb) ||
        !jvm_offset(j, "CodeBlob", "_frame_size", &fs) || !procmem_u64(&j->mem, a_heaps, &arr) || !arr ||
        !procmem_read(&j->mem, arr + o_len, &n, sizeof(n)) || !procmem_u64(&j->mem, arr + o_data, &data))
        return;
    int got = 0;
    for (int i = 0; i < n && got < PT_CODE_HEAPS; i++) {
        uint64_t heap, lo, hi, segmap;
        int32_t log2;
        if (!procmem_u64(&j->mem, data + 8 * (uint64_t)i, &heap) || !heap ||
            !procmem_u64(&j->mem, heap + o_mem + o_lob, &lo) || !procmem_u64(&j->mem, heap + o_mem + o_hib, &hi) ||
            !procmem_u64(&j->mem, heap + o_segmap + o_low, &segmap) ||
            !procmem_read(&j->mem, heap + o_log2, &log2, sizeof(log2)) || log2 <= 0 || log2 > 16)
            continue;
        kl->heaps[got++] = (struct pt_code_heap){.lo = lo, .hi = hi, .segmap = segmap, .log2_segment = (uint32_t)log2};
    }
    if (got) {
        kl->block_header = hb;
        kl->blob_frame_size = fs;
    }
}

/* What the kernel's stack walk needs to go through Java frames: the last
 * Java frame each thread records, where interpreted and compiled code lie,
 * and whether compiled frames keep rbp. Left 0 (no Java walk) when unknown. */
static void java_walk_layout(struct jvm *j, const struct jvm_frames *f, struct pt_jvm_layout *kl)
{
    uint64_t anchor, sp, pc, fp, stub_ra_addr, stub_ra = 0;
    if (jvm_offset(j, "JavaThread", "_anchor", &anchor) &&
        jvm_offset(j, "JavaFrameAnchor", "_last_Java_sp", &sp) &&
        jvm_offset(j, "JavaFrameAnchor", "_last_Java_pc", &pc) &&
        jvm_offset(j, "JavaFrameAnchor", "_last_Java_fp", &fp)) {
        kl->anchor_sp = anchor + sp;
        kl->anchor_pc = anchor + pc;
        kl->anchor_fp = anchor + fp;
    }
    if (jvm_static(j, "StubRoutines", "_call_stub_return_address", &stub_ra_addr))
        procmem_u64(&j->mem, stub_ra_addr, &stub_ra);
    kl->call_stub_ra = stub_ra;
    kl->interp_lo = f->interp_lo;
    kl->interp_hi = f->interp_hi;
    kl->code_lo = f->code_lo;
    kl->code_hi = f->code_hi;
    kl->method_slot = (int32_t)f->method_slot;
    kl->preserve_fp = f->preserve_fp;
    code_heaps(j, kl);
}

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
    jvm_frames_open(&t->frames, &t->j, &t->l);
    java_walk_layout(&t->j, &t->frames, &kl);
    uint32_t key = (uint32_t)pid;
    if (bpf_map_update_elem(tr->jvm_layouts_fd, &key, &kl, BPF_ANY)) {
        jvm_frames_close(&t->frames);
        jvm_close(&t->j);
        return true;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "/proc/%d/root%s", pid, t->j.libjvm);
    tracer_attach_jvm(tr, path);
    /* Its code cache is walked as Java frames from now on. */
    unwind_tables_add_process(pid);
    t->live = true;
    /* The kernel's walk steps over compiled frames by their size; stack
     * copies unwound here can only follow rbp. */
    if (!t->frames.preserve_fp && opts->unwind == PT_UNWIND_COPY)
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

static bool enabled(void)
{
    return tr && options_trace_java(opts);
}

void jvm_tracker_discover_named(void)
{
    if (enabled() && (opts->npids || opts->command))
        discover(monotonic_ns());
}

void jvm_tracker_tick(void)
{
    if (!enabled())
        return;
    discover(monotonic_ns());
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
