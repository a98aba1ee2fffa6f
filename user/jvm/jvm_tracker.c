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

#define MAX_JVMS 256
/* One user's share of the JVM table and of the kernel's thread map: no user
 * can crowd out another's JVMs with fakes of their own. */
#define MAX_JVMS_PER_UID (MAX_JVMS / 4)
#define MAX_JAVA_THREADS 16384
#define THREADS_PER_UID 16384        /* of java_threads' 65 536 */
#define SETTLE_NS 2000000000ULL   /* a new process may map libjvm a moment after exec */
#define STARTING_RETRY_NS 40000000ULL   /* a JVM still starting: read its tables again (each named tick) */
/* Discovery stops for this tick after this much work, so the main loop
 * (signals, -d) is never held up by many processes or slow ones. The first
 * tick, before the main loop, may do more: the JVMs already running. */
#define DISCOVERY_BUDGET_NS 20000000ULL
#define FIRST_DISCOVERY_BUDGET_NS 250000000ULL
/* HotSpot's code cache has at most three heaps; more is garbage. */
#define MAX_CODE_HEAPS 8
#define PROBED_FILES_PER_UID (TRACER_MAX_JVMS / 8)

struct tracked {
    int pid;
    bool live;
    uid_t uid;
    uint64_t useful_ns;   /* found, or last named a class or a frame */
    struct jvm j;
    struct jvm_layout l;
    struct jvm_frames frames;
    int *tids;            /* sorted */
    int ntids;
    uint64_t pid_checked_ns;   /* not live: when its pid was last seen not reused */
    struct jvm_classes *classes;   /* its blockers' class names, by klass */
};

struct java_thread {
    int tid;
    uint64_t thread;
};

struct jvm_tracker {
    struct tracer *tr;
    const struct pt_options *opts;
    struct pt_services *sv;
    struct jvm_candidates *cands;   /* the processes that may be JVMs */
    struct tracked jvms[MAX_JVMS];
    int njvms;
    struct jvm_tracker_stats stats;
    bool warned_full;
    uint64_t tick_start, tick_budget;   /* this discovery's start, and how long it may take */
    /* The libjvm files probed, and their owners (probe_share_left). */
    struct { dev_t dev; ino_t ino; uid_t owner; } probed[TRACER_MAX_JVMS];
    int nprobed;
    int next_candidate;             /* where consider_pending's round robin goes on */
    uint64_t perfmap_paused_until;  /* no JVM is asked for its perf map before (jvm_frames.h) */
    char maps_buf[1 << 16];         /* a process's list of mappings as it is read */
    bool scanned;                   /* system-wide: every process of /proc looked at once */
    /* Scratch, too big for the stack: a JVM being opened, and a JVM's
     * thread list as refresh reads it. */
    struct jvm opening;
    struct jvm_layout opening_layout;
    int listed_tids[MAX_JAVA_THREADS];
    uint64_t listed_threads[MAX_JAVA_THREADS];
    struct java_thread listed[MAX_JAVA_THREADS];
};

struct jvm_tracker *jvm_tracker_new(struct tracer *t, const struct pt_options *o, struct pt_services *sv)
{
    struct jvm_tracker *jt = calloc(1, sizeof(*jt));
    if (!jt || !(jt->cands = jvm_candidates_new())) {
        fprintf(stderr, "parktrace: out of memory for the JVM table\n");
        free(jt);
        return NULL;
    }
    jt->tr = t;
    jt->opts = o;
    jt->sv = sv;
    jt->tick_budget = FIRST_DISCOVERY_BUDGET_NS;
    return jt;
}

void jvm_tracker_stats(const struct jvm_tracker *jt, struct jvm_tracker_stats *s)
{
    *s = jt->stats;
    s->tracked = 0;
    s->entries = jt->njvms;
    for (int i = 0; i < jt->njvms; i++)
        s->tracked += jt->jvms[i].live;
}

/* Whether PID maps a libjvm.so. A list longer than
 * any JVM's (4 MiB of text) is given up on for good: a user's 60 000
 * mappings at 3.9 KB paths are 234 MB of text, and were read again at
 * every look, most of a core (issue 39). */
#define JVM_MAPS_TEXT (4u << 20)
enum maps_jvm { MAPS_NO_JVM, MAPS_JVM, MAPS_TOO_LONG };

static enum maps_jvm maps_libjvm(struct jvm_tracker *jt, int pid)
{
    char line[512];
    FILE *f = procmaps_open_list(pid, jt->maps_buf, sizeof(jt->maps_buf));
    enum maps_jvm found = MAPS_NO_JVM;
    size_t text = 0;
    while (f && found == MAPS_NO_JVM && fgets(line, sizeof(line), f)) {
        if ((text += strlen(line)) > JVM_MAPS_TEXT)
            found = MAPS_TOO_LONG;
        else if (strstr(line, "/libjvm.so\n"))
            found = MAPS_JVM;
    }
    if (f)
        fclose(f);
    return found;
}

static void refresh(struct jvm_tracker *jt, struct tracked *t);

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

/* Forgets tracked JVM T: its layout and threads leave the kernel's maps. */
static void untrack(struct jvm_tracker *jt, struct tracked *t)
{
    if (t->live)
        jvm_maps_drop_layout(jt->tr, t->pid);
    for (int i = 0; i < t->ntids; i++)
        jvm_maps_drop_thread(jt->tr, t->tids[i]);
    jvm_frames_close(&t->frames);
    jvm_close(&t->j);
    free(t->tids);
    jvm_classes_free(t->classes);
    memset(t, 0, sizeof(*t));
    t->uid = (uid_t)-1;   /* nobody's: reused first */
}

/* The entry a new JVM of user UID goes in. A user holds at most
 * MAX_JVMS_PER_UID entries; past that, or in a full table, an entry is
 * reused: one whose JVM exited or was given up on, else the least recently
 * useful of this user (at their share) or of the user holding the most. */
static struct tracked *slot_for(struct jvm_tracker *jt, uid_t uid)
{
    int mine = 0, most = 0;
    uid_t most_uid = uid;
    for (int i = 0; i < jt->njvms; i++) {
        int n = 0;
        mine += jt->jvms[i].uid == uid;
        for (int k = 0; k < jt->njvms; k++)
            n += jt->jvms[k].uid == jt->jvms[i].uid;
        if (n > most) {
            most = n;
            most_uid = jt->jvms[i].uid;
        }
    }
    /* An entry let go is taken before a fresh one: each is 130 KiB, and a
     * machine starting JVMs all day touched a fresh one per JVM until the
     * table's 33 MiB were resident. */
    for (int i = 0; i < jt->njvms && mine < MAX_JVMS_PER_UID; i++)
        if (jt->jvms[i].uid == (uid_t)-1)
            return &jt->jvms[i];
    if (mine < MAX_JVMS_PER_UID && jt->njvms < MAX_JVMS)
        return &jt->jvms[jt->njvms++];
    uid_t from = mine >= MAX_JVMS_PER_UID ? uid : most_uid;
    struct tracked *victim = NULL;
    for (int i = 0; i < jt->njvms; i++) {
        struct tracked *t = &jt->jvms[i];
        if (mine < MAX_JVMS_PER_UID ? !t->live : !t->live && t->uid == uid) {
            victim = t;
            break;
        }
        if (t->uid == from && (!victim || t->useful_ns < victim->useful_ns))
            victim = t;
    }
    if (victim->live) {
        jt->stats.evicted++;
        if (!jt->warned_full)
            fprintf(stderr, "parktrace: JVM table full (%d, at most %d per user): JVM %d (uid %u), the least "
                            "recently useful, is no longer tracked; --self-stats counts jvms_evicted\n",
                    MAX_JVMS, MAX_JVMS_PER_UID, victim->pid, (unsigned)victim->uid);
        jt->warned_full = true;
    }
    untrack(jt, victim);
    return victim;
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

/* Returns true when PID is settled: tracked, or reported as unreadable;
 * false when its JVM is still starting and should be looked at again. */
static bool start_tracking(struct jvm_tracker *jt, int pid, bool last_chance)
{
    struct procstatus ps;
    if (procstatus_read(pid, &ps) != 0)
        return true;
    struct jvm *j = &jt->opening;
    struct jvm_layout *l = &jt->opening_layout;
    int rc = jvm_open(j, jt->sv->maps, pid);
    if (!rc)
        rc = jvm_layout_read(j, l);
    if (rc == 1 && !last_chance) {
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
    struct tracked *t = slot_for(jt, ps.euid);
    *t = (struct tracked){.pid = pid, .uid = ps.euid, .useful_ns = monotonic_ns(), .j = *j, .l = *l};
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
    t->frames.perf_paused_until = &jt->perfmap_paused_until;
    java_walk_layout(&t->j, &t->frames, &kl);
    if (!jvm_maps_set_layout(jt->tr, pid, &kl, false)) {
        untrack(jt, t);   /* an entry that stays unused, not live: reused first */
        return true;
    }
    /* Its threads first: until they are in java_threads its parks are
     * futex waits, and what follows can take a fifth of a second (the
     * unwind tables of a libjvm not in the unwind cache). */
    t->live = true;
    t->tids = calloc(MAX_JAVA_THREADS, sizeof(int));
    refresh(jt, t);
    if (!t->live)
        return true;   /* given up on: kept for naming, its slot reused first */
    /* The mapping's own file (/proc/PID/map_files), never a FIFO a user
     * put at its name nor a path through a user's mounts. */
    struct pm_proc *mapped = procmaps_get(jt->sv->maps, pid);
    struct pm_map *m = procmaps_find(mapped, t->j.libjvm_at);
    int fd = m ? procmaps_open(mapped, m) : -1;
    if (fd >= 0 && probe_share_left(jt, fd) && tracer_attach_jvm(jt->tr, fd, t->j.libjvm) == 1 &&
        t->l.stw_collector)
        keep_heap_reads(jt, pid);
    if (fd >= 0)
        close(fd);
    /* Its code cache is walked as Java frames from now on. */
    unwind_tables_add_process(jt->sv->tables, pid);
    /* The kernel's walk steps over compiled frames by their size; stack
     * copies unwound here can only follow rbp. */
    if (!t->frames.preserve_fp && jt->opts->unwind == PT_UNWIND_COPY)
        fprintf(stderr, "parktrace: JVM %d runs without -XX:+PreserveFramePointer: its Java stacks stop at "
                        "the first JIT-compiled frame; blockers, classes and times are complete. Restart it "
                        "with -XX:+PreserveFramePointer for whole stacks\n", pid);
    return true;
}

/* The tracked JVM that is process PID now (not an exited one whose pid was
 * reused), or NULL. */
static struct tracked *tracked_pid(struct jvm_tracker *jt, int pid)
{
    for (int i = 0; i < jt->njvms; i++)
        if (jt->jvms[i].pid == pid) {
            uint64_t start;
            if (procstatus_start_time(pid, &start) == 0 && start == jt->jvms[i].j.start_time)
                return &jt->jvms[i];
        }
    return NULL;
}


static bool over_budget(struct jvm_tracker *jt)
{
    return monotonic_ns() - jt->tick_start > jt->tick_budget;
}

static void consider(struct jvm_tracker *jt, struct jvm_candidate *c, uint64_t now)
{
    if (c->settled || c->pid == getpid() || now < c->next_try)
        return;
    if (tracked_pid(jt, c->pid)) {
        c->settled = true;
        return;
    }
    int pid = c->pid;
    uint64_t age = now - c->first_seen;
    enum maps_jvm m = maps_libjvm(jt, pid);
    if (m == MAPS_TOO_LONG) {
        c->settled = true;
        return;
    }
    if (m == MAPS_JVM) {
        bool settled = start_tracking(jt, pid, age > 5 * SETTLE_NS);
        /* Looked up again: start_tracking may have added or moved entries. */
        if ((c = jvm_candidates_find(jt->cands, pid))) {
            c->settled = settled;
            c->next_try = now + STARTING_RETRY_NS;
        }
    } else {
        /* Each look reads its whole maps: the longer a program has run
         * without libjvm, the less often (a JVM maps it within a few
         * hundred ms of its exec, and is then late by an eighth of that). */
        c->settled = age > SETTLE_NS;
        c->next_try = now + age / 8;
    }
}

static void consider_pid(struct jvm_tracker *jt, int pid, uint64_t now)
{
    struct jvm_candidate *c = jvm_candidates_add(jt->cands, pid, now, &jt->stats.candidates_evicted);
    if (c)
        consider(jt, c, now);
}

/* An exec starts a new program in an old process: look at it afresh. */
static void consider_again(struct jvm_tracker *jt, int pid, uint64_t now)
{
    struct jvm_candidate *c = jvm_candidates_add(jt->cands, pid, now, &jt->stats.candidates_evicted);
    if (!c || tracked_pid(jt, pid))
        return;   /* already tracked */
    c->settled = false;
    c->first_seen = now;
    c->next_try = 0;
    c->exec = true;
}

/* The pending candidates: those exec'd since the start first (a JVM
 * started now, whose parks are charged to futexes until it is found; the
 * round robin below reached it only after hundreds of processes already
 * running, each read whole, a second or more), then the rest round robin
 * from where the last tick stopped. */
static void consider_pending(struct jvm_tracker *jt, uint64_t now)
{
    for (int k = 0, n = jvm_candidates_count(jt->cands); k < n && !over_budget(jt); k++) {
        struct jvm_candidate *c = jvm_candidates_at(jt->cands, k);
        if (c->exec && !c->settled)
            consider(jt, c, now);
    }
    for (int k = 0, n = jvm_candidates_count(jt->cands); k < n && !over_budget(jt); k++) {
        int *next = &jt->next_candidate;
        *next = *next < jvm_candidates_count(jt->cands) ? *next : 0;
        consider(jt, jvm_candidates_at(jt->cands, (*next)++), now);
    }
}

/* The processes that may be JVMs: those named, those followed, or all. */
static void discover(struct jvm_tracker *jt, uint64_t now)
{
    jt->tick_start = monotonic_ns();
    if (jt->opts->npids) {
        for (int i = 0; i < jt->opts->npids && !over_budget(jt); i++)
            consider_pid(jt, jt->opts->pids[i], now);
    } else if (jt->opts->command) {
        uint32_t key, next;
        bool first = true;
        while (!over_budget(jt) && jvm_maps_next_traced(jt->tr, first ? NULL : &key, &next)) {
            first = false;
            key = next;
            consider_pid(jt, (int)key, now);
        }
    } else {
        /* System-wide: every process once, then only programs that exec,
         * each looked at until it maps libjvm or has aged. */
        if (!jt->scanned) {
            DIR *d = opendir("/proc");
            for (struct dirent *e; d && (e = readdir(d));)
                if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
                    jvm_candidates_add(jt->cands, atoi(e->d_name), now, &jt->stats.candidates_evicted);
            if (d)
                closedir(d);
            jt->scanned = true;
        }
        uint32_t pid;
        while (jvm_maps_take_exec(jt->tr, &pid))
            consider_again(jt, (int)pid, now);
        consider_pending(jt, now);
    }
    jt->tick_budget = DISCOVERY_BUDGET_NS;
}


static int by_tid(const void *a, const void *b)
{
    const struct java_thread *x = a, *y = b;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* How many more threads user UID may publish, besides T's own. */
static int thread_room(struct jvm_tracker *jt, const struct tracked *t)
{
    int used = 0;
    for (int i = 0; i < jt->njvms; i++)
        if (&jt->jvms[i] != t && jt->jvms[i].uid == t->uid)
            used += jt->jvms[i].ntids;
    return used < THREADS_PER_UID ? THREADS_PER_UID - used : 0;
}

/* Publishes the JVM's current threads; forgets threads that are gone. */
static void refresh(struct jvm_tracker *jt, struct tracked *t)
{
    int *tids = jt->listed_tids;
    uint64_t *threads = jt->listed_threads;
    struct java_thread *now = jt->listed;
    int n = jvm_java_threads(&t->j, tids, threads, MAX_JAVA_THREADS);
    if (n < 0) {
        /* Exited, or its list cannot be believed: given up on, kept for
         * naming what it already has, and the first entry reused. */
        if (kill(t->pid, 0) == 0)
            jt->stats.given_up++;
        n = 0;
        t->live = false;
        jvm_maps_drop_layout(jt->tr, t->pid);
    }
    int room = thread_room(jt, t);
    if (n > room) {
        jt->stats.threads_refused += (uint64_t)(n - room);
        n = room;
    }
    for (int i = 0; i < n; i++)
        now[i] = (struct java_thread){tids[i], threads[i]};
    qsort(now, (size_t)n, sizeof(*now), by_tid);
    /* Both lists sorted by tid: one merge finds the gone and the new. */
    int kept = 0;
    for (int i = 0, k = 0; i < t->ntids || k < n;) {
        if (k == n || (i < t->ntids && t->tids[i] < now[k].tid)) {
            jvm_maps_drop_thread(jt->tr, t->tids[i++]);
            continue;
        }
        if (i < t->ntids && t->tids[i] == now[k].tid)
            i++;
        if (kept && now[k].tid == now[kept - 1].tid) {
            k++;   /* listed twice */
            continue;
        }
        jvm_maps_set_thread(jt->tr, now[k].tid, now[k].thread);
        now[kept++] = now[k++];
    }
    for (int i = 0; i < kept; i++)
        t->tids[i] = now[i].tid;
    t->ntids = kept;
}

static bool enabled(struct jvm_tracker *jt)
{
    return jt->tr && options_trace_java(jt->opts);
}

void jvm_tracker_discover_named(struct jvm_tracker *jt)
{
    if (enabled(jt) && (jt->opts->npids || jt->opts->command))
        discover(jt, monotonic_ns());
}

/* Exited JVMs are kept to name what they left (their code cache, their
 * last perf map) until KEEP_EXITED are: then the one least recently useful
 * goes. A machine that starts a JVM a minute would otherwise hold every
 * JVM's perf map of the day, up to the table's 256. */
#define KEEP_EXITED 16

static void forget_exited(struct jvm_tracker *jt)
{
    int kept = 0;
    for (int i = 0; i < jt->njvms; i++)
        kept += !jt->jvms[i].live && jt->jvms[i].j.pid;
    while (kept > KEEP_EXITED) {
        /* Given-up JVMs still running stay: forgotten, they would be
         * looked at again. */
        struct tracked *oldest = NULL;
        for (int i = 0; i < jt->njvms; i++) {
            struct tracked *t = &jt->jvms[i];
            if (!t->live && t->j.pid && kill(t->pid, 0) && errno == ESRCH &&
                (!oldest || t->useful_ns < oldest->useful_ns))
                oldest = t;
        }
        if (!oldest)
            return;
        untrack(jt, oldest);
        kept--;
    }
}

void jvm_tracker_process_gone(struct jvm_tracker *jt, int pid)
{
    for (int i = 0; jt && i < jt->njvms; i++) {
        struct tracked *t = &jt->jvms[i];
        if (t->pid == pid && t->j.pid && kill(pid, 0) && errno == ESRCH) {
            untrack(jt, t);
            return;
        }
    }
}

void jvm_tracker_tick(struct jvm_tracker *jt)
{
    if (!enabled(jt))
        return;
    discover(jt, monotonic_ns());
    for (int i = 0; i < jt->njvms; i++)
        if (jt->jvms[i].live)
            refresh(jt, &jt->jvms[i]);
    forget_exited(jt);
}

bool jvm_tracker_class(struct jvm_tracker *jt, int pid, uint64_t klass, char *name, size_t len, char *supers,
                       size_t slen)
{
    for (int i = 0; i < jt->njvms; i++)
        if (jt->jvms[i].pid == pid && jt->jvms[i].j.pid) {
            struct tracked *t = &jt->jvms[i];
            t->useful_ns = monotonic_ns();
            if (jvm_classes_get(t->classes, klass, name, len, supers, slen))
                return true;
            if (!jvm_klass_name(&t->j, &t->l, klass, name, len))
                return false;
            jvm_klass_supers(&t->j, &t->l, klass, supers, slen);
            jvm_classes_put(&t->classes, klass, name, supers);
            return true;
        }
    return false;
}

/* The tracked JVM that names the frames of process PID: the live one;
 * else one that exited or was given up on, whose code ranges and perf map
 * are kept, unless PID is another process now. NULL when none. */
static struct tracked *namer_of(struct jvm_tracker *jt, int pid)
{
    struct tracked *kept = NULL;
    for (int i = 0; i < jt->njvms; i++) {
        struct tracked *t = &jt->jvms[i];
        if (t->pid != pid)
            continue;
        if (t->live)
            return t;
        if (t->j.pid)
            kept = t;
    }
    /* Looked at again at most every 100 ms: a stack's every frame asks. */
    uint64_t start, now = monotonic_ns();
    if (!kept || now - kept->pid_checked_ns < 100000000ULL)
        return kept;
    if (procstatus_start_time(pid, &start) == 0 && start != kept->j.start_time)
        return NULL;
    kept->pid_checked_ns = now;
    return kept;
}

bool jvm_tracker_frame_name(struct jvm_tracker *jt, int pid, uint64_t pc, uint64_t fp, const struct pt_sample *smp,
                            char *out, size_t len)
{
    struct tracked *t = namer_of(jt, pid);
    /* A bare PT_FRAME_METHOD (no Method*) asks whether PID is a live JVM. */
    if (!t || (pc == PT_FRAME_METHOD && !t->live))
        return false;
    struct jvm_frames *f = &t->frames;
    f->gone = !t->live;
    bool named = jvm_frames_name(f, &t->j, &t->l, pc, fp, smp, out, len);
    if (named)
        t->useful_ns = monotonic_ns();
    /* The attach listener parktrace caused waits in accept: idle time when
     * the scheduler measures idle sleeps; else its alive time is taken out. */
    if (t->live && f->listener_tid && !f->listener_uncounted && !jt->tr->idle_sleeps) {
        struct proc_lives lives = proc_lives_of(jt->tr);
        proc_lives_uncount_thread(&lives, pid, f->listener_tid, f->listener_since);
        f->listener_uncounted = true;
    }
    return named;
}

void jvm_tracker_free(struct jvm_tracker *jt)
{
    if (!jt)
        return;
    for (int i = 0; i < jt->njvms; i++) {
        jvm_frames_close(&jt->jvms[i].frames);
        jvm_close(&jt->jvms[i].j);
        free(jt->jvms[i].tids);
    }
    jvm_candidates_free(jt->cands);
    free(jt);
}
