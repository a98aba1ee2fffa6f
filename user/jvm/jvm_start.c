/* Following a JVM once found: its HotSpot tables read, its layout and
 * threads given to the kernel, its libjvm probed, its unwind tables
 * published again so that the kernel walks its Java frames. */
#include "jvm_tracker.h"

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm_candidates.h"
#include "jvm_classes.h"
#include "jvm_frames.h"
#include "jvm_maps.h"
#include "jvm_objects.h"
#include "monotonic.h"
#include "proc_lives.h"
#include "procmaps.h"
#include "services.h"
#include "procstatus.h"
#include "safe_open.h"
#include "unwind_tables.h"
#include "jvm_tracker_parts.h"

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
    if (n <= 0 || n > MAX_CODE_HEAPS)
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
void java_walk_layout(struct jvm *j, const struct jvm_frames *f, struct pt_jvm_layout *kl)
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

/* The loader probes at most TRACER_MAX_JVMS distinct libjvm files: a user
 * may have uprobes put on a few files they own, root's files always. */
static bool probe_share_left(struct jvm_tracker *jt, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return false;
    int owned = 0;
    for (int i = 0; i < jt->nprobed; i++) {
        if (jt->probed[i].dev == st.st_dev && jt->probed[i].ino == st.st_ino)
            return true;
        owned += jt->probed[i].owner == st.st_uid;
    }
    if ((st.st_uid != 0 && owned >= PROBED_FILES_PER_UID) || jt->nprobed == TRACER_MAX_JVMS) {
        jt->stats.probes_refused++;
        return false;
    }
    jt->probed[jt->nprobed].dev = st.st_dev;
    jt->probed[jt->nprobed].ino = st.st_ino;
    jt->probed[jt->nprobed++].owner = st.st_uid;
    return true;
}

/* Lets JVM PID's parks keep what they read of its heap between two
 * safepoints, now that its libjvm's safepoints are probed: set in the
 * kernel's entry as it stands, offsets it has learnt since included. */
static void keep_heap_reads(struct jvm_tracker *jt, int pid)
{
    struct pt_jvm_layout kl;
    if (!jvm_maps_get_layout(jt->tr, pid, &kl))
        return;
    kl.stable_oops = 1;
    if (jvm_maps_set_layout(jt->tr, pid, &kl, true))
        jt->stats.heap_reads_kept++;
}

/* What the kernel needs of tracked JVM T to read its parks and monitors:
 * the JavaThread's size and OS thread offsets found, the rest from its
 * layout. */
static struct pt_jvm_layout kernel_layout(const struct tracked *t, uint64_t size, uint64_t osthread,
                                          uint64_t os_tid)
{
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
        .aos_owner = t->l.aos_owner,
    };
    /* Monitors: without these offsets only parks are recognised. */
    uint64_t pending, waiting, object, owner;
    if (jvm_offset(&t->j, "JavaThread", "_current_pending_monitor", &pending) &&
        jvm_offset(&t->j, "JavaThread", "_current_waiting_monitor", &waiting) &&
        jvm_offset(&t->j, "ObjectMonitor", "_object", &object)) {
        kl.pending_monitor = pending;
        kl.waiting_monitor = waiting;
        kl.monitor_object = object;
        if (jvm_offset(&t->j, "ObjectMonitor", "_owner", &owner))
            kl.monitor_owner = owner;
    }
    return kl;
}

/* The JVM's uprobes on its libjvm, opened as the mapping's own file
 * (/proc/PID/map_files), never a FIFO a user put at its name nor a path
 * through a user's mounts; with its safepoints probed, its parks keep
 * their heap reads between two. */
static void probe_libjvm(struct jvm_tracker *jt, struct tracked *t)
{
    struct pm_proc *mapped = procmaps_get(jt->sv->maps, t->pid);
    struct pm_map *m = procmaps_find(mapped, t->j.libjvm_at);
    int fd = m ? procmaps_open(mapped, m) : -1;
    if (fd >= 0 && probe_share_left(jt, fd) && tracer_attach_jvm(jt->tr, fd, t->j.libjvm) == 1 &&
        t->l.stw_collector)
        keep_heap_reads(jt, t->pid);
    if (fd >= 0)
        close(fd);
}

/* Returns true when PID is settled: tracked, or reported as unreadable;
 * false when its JVM is still starting and should be looked at again. */
bool jvm_tracker_start(struct jvm_tracker *jt, int pid, bool last_chance)
{
    struct procstatus ps;
    if (procstatus_read(pid, &ps) != 0)
        return true;
    struct jvm *j = &jt->opening;
    struct jvm_layout *l = &jt->opening_layout;
    int rc = jvm_open(j, jt->sv->maps, pid);
    /* No libjvm in its maps (-1), though discovery saw one: read at an
     * exec's edge; looked at again as a JVM still starting. */
    bool starting = rc == 1 || rc == -1;
    if (!rc)
        starting = (rc = jvm_layout_read(j, l)) == 1;
    if (starting && !last_chance) {
        jvm_close(j);
        return false;
    }
    if (rc) {
        /* Traced as far as possible: its waits stay futex rows. */
        fprintf(stderr, "parktrace: %s; its parks are shown as futex waits\n",
                rc == 1 ? "a JVM never finished starting" : j->error);
        jvm_close(j);
        return true;
    }
    uint64_t size, osthread, os_tid;
    if (!jvm_type_size(j, "JavaThread", &size) || !jvm_offset(j, "JavaThread", "_osthread", &osthread) ||
        !jvm_offset(j, "OSThread", "_thread_id", &os_tid)) {
        fprintf(stderr, "parktrace: JVM %d: vmStructs lacks JavaThread's size or OS thread; its parks are "
                        "shown as futex waits\n", pid);
        jvm_close(j);
        return true;
    }
    struct tracked *t = jvm_tracker_slot_for(jt, ps.euid);
    *t = (struct tracked){.pid = pid, .uid = ps.euid, .useful_ns = monotonic_ns(), .j = *j, .l = *l};
    jvm_tids_open(&t->ids, pid, ps.nspid != pid);
    struct pt_jvm_layout kl = kernel_layout(t, size, osthread, os_tid);
    jvm_frames_open(&t->frames, &t->j, &t->l);
    t->frames.perf_paused_until = &jt->perfmap_paused_until;
    java_walk_layout(&t->j, &t->frames, &kl);
    if (!jvm_maps_set_layout(jt->tr, pid, &kl, false)) {
        jvm_tracker_untrack(jt, t);   /* an entry that stays unused, not live: reused first */
        return true;
    }
    /* Its threads first: until they are in java_threads its parks are
     * futex waits, and what follows can take a fifth of a second (the
     * unwind tables of a libjvm not in the unwind cache). */
    t->live = true;
    t->tids = calloc(MAX_JAVA_THREADS, sizeof(int));
    jvm_tracker_refresh(jt, t);
    if (!t->live)
        return true;   /* given up on: kept for naming, its slot reused first */
    probe_libjvm(jt, t);
    /* Its code cache is walked as Java frames from now on. */
    unwind_tables_add_process(jt->sv->tables, pid);
    t->walks_java = true;
    /* The kernel's walk steps over compiled frames by their size; stack
     * copies unwound here can only follow rbp. */
    if (!t->frames.preserve_fp && jt->opts->unwind == PT_UNWIND_COPY)
        fprintf(stderr, "parktrace: JVM %d runs without -XX:+PreserveFramePointer: its Java stacks stop at "
                        "the first JIT-compiled frame; blockers, classes and times are complete. Restart it "
                        "with -XX:+PreserveFramePointer for whole stacks\n", pid);
    return true;
}
