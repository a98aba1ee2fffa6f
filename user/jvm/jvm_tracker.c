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

#include "go_tracker.h"
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

/* Failed thread-list reads in a row before a live JVM is given up on: a
 * list freed under one read is read whole at the next tick. */
#define LIST_FAILURES_TO_GIVE_UP 8

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
    if (t && options_trace_go(o) && !(jt->go = go_tracker_new(t))) {
        jvm_candidates_free(jt->cands);
        free(jt);
        return NULL;
    }
    jt->tick_budget = FIRST_DISCOVERY_BUDGET_NS;
    return jt;
}

void jvm_tracker_stats(const struct jvm_tracker *jt, struct jvm_tracker_stats *s)
{
    *s = jt->stats;
    if (jt->go) {
        struct go_tracker_stats gs;
        go_tracker_stats(jt->go, &gs);
        s->go_processes = gs.processes;
        s->go_unsupported = gs.unsupported;
        s->go_refused = gs.refused;
    }
    s->tracked = 0;
    s->entries = jt->njvms;
    for (int i = 0; i < jt->njvms; i++)
        s->tracked += jt->jvms[i].live;
}

/* Forgets tracked JVM T: its layout and threads leave the kernel's maps. */
void jvm_tracker_untrack(struct jvm_tracker *jt, struct tracked *t)
{
    if (t->live)
        jvm_maps_drop_layout(jt->tr, t->pid);
    for (int i = 0; i < t->ntids; i++)
        jvm_maps_drop_thread(jt->tr, t->tids[i]);
    jvm_frames_close(&t->frames);
    jvm_close(&t->j);
    free(t->tids);
    jvm_tids_close(&t->ids);
    jvm_classes_free(t->classes);
    memset(t, 0, sizeof(*t));
    t->uid = (uid_t)-1;   /* nobody's: reused first */
}

/* The entry a new JVM of user UID goes in. A user holds at most
 * MAX_JVMS_PER_UID entries; past that, or in a full table, an entry is
 * reused: one whose JVM exited or was given up on, else the least recently
 * useful of this user (at their share) or of the user holding the most. */
struct tracked *jvm_tracker_slot_for(struct jvm_tracker *jt, uid_t uid)
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
    jvm_tracker_untrack(jt, victim);
    return victim;
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
void jvm_tracker_refresh(struct jvm_tracker *jt, struct tracked *t)
{
    int *tids = jt->listed_tids;
    uint64_t *threads = jt->listed_threads;
    struct java_thread *now = jt->listed;
    int n = jvm_java_threads(&t->j, tids, threads, MAX_JAVA_THREADS);
    if (n >= 0) {
        t->list_failures = 0;
    } else {
        bool alive = kill(t->pid, 0) == 0;
        if (alive && ++t->list_failures < LIST_FAILURES_TO_GIVE_UP) {
            /* A JVM starting and ending threads by the thousand a second
             * frees lists under our reads: its threads as last read, for now. */
            jt->stats.lists_unread++;
            return;
        }
        /* Exited, or its list cannot be believed: given up on, kept for
         * naming what it already has, and the first entry reused. */
        if (alive)
            jt->stats.given_up++;
        n = 0;
        t->live = false;
        jvm_maps_drop_layout(jt->tr, t->pid);
    }
    /* Host ids, threads of this process only: a container's JVM lists its
     * own namespace's ids (its parks stayed futex waits), and a list read
     * from a process's memory may name any thread. */
    n = jvm_tids_to_host(&t->ids, tids, threads, n, t->tids, t->ntids);
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
    return jt->tr && options_trace_runtimes(jt->opts);
}

void jvm_tracker_discover_named(struct jvm_tracker *jt)
{
    if (enabled(jt) && (jt->opts->npids || jt->opts->command))
        jvm_tracker_discover(jt, monotonic_ns());
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
            if (!t->live && t->j.pid && procstatus_gone(t->pid) &&
                (!oldest || t->useful_ns < oldest->useful_ns))
                oldest = t;
        }
        if (!oldest)
            return;
        jvm_tracker_untrack(jt, oldest);
        kept--;
    }
}

void jvm_tracker_process_gone(struct jvm_tracker *jt, int pid)
{
    for (int i = 0; jt && i < jt->njvms; i++) {
        struct tracked *t = &jt->jvms[i];
        if (t->pid == pid && t->j.pid && procstatus_gone(pid)) {
            jvm_tracker_untrack(jt, t);
            return;
        }
    }
}

void jvm_tracker_look_program(struct jvm_tracker *jt, int pid, int fd, const char *name)
{
    if (jt->go)
        go_tracker_look_file(jt->go, pid, fd, name);
}

/* A JVM found before its interpreter or code cache was set up had 0 for
 * them in its layout, and the kernel could not walk its Java frames (their
 * stacks read [Interpreter], for good): read again at each tick until
 * they are there, and the kernel's layout updated. */
static void complete_code_ranges(struct jvm_tracker *jt, struct tracked *t)
{
    if (t->frames.interp_hi && t->frames.code_hi)
        return;
    jvm_frames_read_code_ranges(&t->frames, &t->j);
    struct pt_jvm_layout kl;
    if (!t->frames.interp_hi || !t->frames.code_hi || !jvm_maps_get_layout(jt->tr, t->pid, &kl))
        return;
    java_walk_layout(&t->j, &t->frames, &kl);
    if (jvm_maps_set_layout(jt->tr, t->pid, &kl, true))
        jt->stats.code_ranges_late++;
}

void jvm_tracker_tick(struct jvm_tracker *jt)
{
    if (!enabled(jt))
        return;
    jvm_tracker_discover(jt, monotonic_ns());
    for (int i = 0; i < jt->njvms; i++)
        if (jt->jvms[i].live) {
            jvm_tracker_refresh(jt, &jt->jvms[i]);
            complete_code_ranges(jt, &jt->jvms[i]);
        }
    forget_exited(jt);
}

bool jvm_tracker_walks_java(const struct jvm_tracker *jt, int pid)
{
    for (int i = 0; jt && i < jt->njvms; i++)
        if (jt->jvms[i].pid == pid && jt->jvms[i].live)
            return jt->jvms[i].walks_java;
    return false;
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
    go_tracker_free(jt->go);
    free(jt);
}
