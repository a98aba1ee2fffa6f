/* Finding JVMs: the processes that may be one (those named, those
 * followed, or every process and then the programs that exec), each looked
 * at until it maps libjvm or has aged, within a budget per tick. */
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

#include "cgroup.h"
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

/* Whether PID is in one of the --cgroup cgroups (every process is, without
 * the option): a JVM outside them is not looked at, nor attached to. */
static bool in_cgroups(const struct jvm_tracker *jt, int pid)
{
    char path[4096];
    if (!jt->opts->ncgroups)
        return true;
    if (!cgroup_of_pid(pid, path, sizeof(path)))
        return false;
    for (int i = 0; i < jt->opts->ncgroups; i++)
        if (cgroup_path_under(path, jt->opts->cgroups[i]))
            return true;
    return false;
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
    /* A Go program is no JVM: each program the process runs looked at
     * once (a command's child is parktrace until its exec). */
    if (jt->go && go_tracker_look(jt->go, pid, &c->go_looked)) {
        c->settled = true;
        return;
    }
    uint64_t age = now - c->first_seen;
    /* Go alone: looked at again as a JVM would be, until it has aged (a
     * command's child runs parktrace until its exec). */
    if (!options_trace_java(jt->opts)) {
        c->settled = age > SETTLE_NS;
        c->next_try = now + age / 8;
        return;
    }
    /* Outside the cgroups now, as a program not yet a JVM: a runtime moves
     * a container's first process into its cgroup before its exec. */
    enum maps_jvm m = in_cgroups(jt, pid) ? maps_libjvm(jt, pid) : MAPS_NO_JVM;
    if (m == MAPS_TOO_LONG) {
        c->settled = true;
        return;
    }
    if (m == MAPS_JVM) {
        bool settled = jvm_tracker_start(jt, pid, age > 5 * SETTLE_NS);
        /* Looked up again: jvm_tracker_start may have added or moved entries. */
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
void jvm_tracker_discover(struct jvm_tracker *jt, uint64_t now)
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
