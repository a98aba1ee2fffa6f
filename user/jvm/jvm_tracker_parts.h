/* What the JVM tracker's files share (jvm_tracker.c, jvm_discovery.c,
 * jvm_start.c): the tracker and the JVMs it follows. Not for other code,
 * which uses jvm_tracker.h. */
#ifndef PT_JVM_TRACKER_PARTS_H
#define PT_JVM_TRACKER_PARTS_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "jvm_candidates.h"
#include "jvm_classes.h"
#include "jvm_frames.h"
#include "jvm_objects.h"
#include "jvm_tids.h"
#include "jvm_tracker.h"
#include "jvm_vmstructs.h"

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
    bool walks_java;      /* its tables republished as a JVM's: the kernel walks its Java frames */
    uid_t uid;
    uint64_t useful_ns;   /* found, or last named a class or a frame */
    struct jvm j;
    struct jvm_layout l;
    struct jvm_frames frames;
    int *tids;            /* sorted, as the host numbers them */
    int ntids;
    struct jvm_tids ids;  /* its list's thread ids (a container's) to the host's */
    uint64_t pid_checked_ns;   /* not live: when its pid was last seen not reused */
    struct jvm_classes *classes;   /* its blockers' class names, by klass */
    int list_failures;    /* thread-list reads failed in a row */
};

struct java_thread {
    int tid;
    uint64_t thread;
};

struct jvm_tracker {
    struct tracer *tr;
    const struct pt_options *opts;
    struct pt_services *sv;
    struct jvm_candidates *cands;   /* the processes that may be JVMs (or Go programs) */
    struct go_tracker *go;          /* with --kinds go-park: the Go programs found among them */
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
     * thread list as jvm_tracker_refresh reads it. */
    struct jvm opening;
    struct jvm_layout opening_layout;
    int listed_tids[MAX_JAVA_THREADS];
    uint64_t listed_threads[MAX_JAVA_THREADS];
    struct java_thread listed[MAX_JAVA_THREADS];
};

/* jvm_tracker.c */
void jvm_tracker_untrack(struct jvm_tracker *jt, struct tracked *t);
struct tracked *jvm_tracker_slot_for(struct jvm_tracker *jt, uid_t uid);
void jvm_tracker_refresh(struct jvm_tracker *jt, struct tracked *t);

/* jvm_discovery.c */
void jvm_tracker_discover(struct jvm_tracker *jt, uint64_t now);

/* jvm_start.c */
/* What the kernel's walk through J's Java frames needs, into KL. */
void java_walk_layout(struct jvm *j, const struct jvm_frames *f, struct pt_jvm_layout *kl);
bool jvm_tracker_start(struct jvm_tracker *jt, int pid, bool last_chance);

#endif
