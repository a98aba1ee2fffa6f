/* Turns the kernel's cumulative tables into one snapshot model per window
 * (model.h): windows, in-progress waits, names, classes and roles, CSP and
 * phases, stacks and wakers. The only reader of the kernel's maps after
 * loading; the services it calls (names, stacks, JVMs) never call back. */
#ifndef PT_COLLECT_H
#define PT_COLLECT_H
#include <stdint.h>
#include <stdio.h>
#include "classify.h"
#include "collect_chains.h"
#include "csp.h"
#include "phases.h"
#include "loader.h"
#include "stack_maps.h"
#include "metrics.h"
#include "options.h"
#include "model.h"

struct cgroup_name;
#include "retired.h"
#include "stack_weights.h"

struct blocker {
    bool resolved;
    int tries;
    int restacks;              /* first stacks asked for again, having come cut short */
    int blind_restacks;        /* and having come walked before the JVM was known */
    int jvm_waits;             /* passes it waited for the kernel to walk its JVM's Java frames */
    bool pending;              /* in the collector's pending list */
    int pid;
    char comm[PT_COMM_LEN + 1];
    char thread[PT_COMM_LEN + 1];
    char *name;
    const struct cgroup_name *cgroup;   /* its process's, NULL: unknown */
    int ns_pid;
    char *java_class;          /* a Java blocker's class once known (its own copy) */
    struct pt_class cls;
    bool ip_named;             /* cls read off its first wait's ip (pt_slot's naming_ip) */
    const struct pt_stack *first_stack;
    uint64_t idle_naming;      /* the first stack's naming `idle` was read off */
    uint8_t idle;              /* idle_stack's flags for its first stack */
    bool join;                 /* its waits are joins: its waker ends a thread */
    bool owner_recorded;       /* a java.util.concurrent lock: its owner is read for wait chains */
    const struct pt_stack *join_checked;   /* the waker stack `join` was read off */
    uint64_t join_naming;
    uint64_t top_naming;       /* the first stack's naming top_frame was read off */
    const char *top_frame;
    struct pt_counters prev;   /* at the start of the current interval */
    int phase;                 /* index of its open phase plus one, or 0 */
    bool phase_seen;           /* fed this interval */
    bool watched;              /* its process's alive time is being counted */
};

struct waker_entry;
struct pt_services;

#define COLLECT_PENDING 4096

struct collector {
    struct tracer *t;
    struct stack_maps kernel;  /* the kernel's stack tables */
    struct pt_services *sv;    /* maps and symbols (main.c's) */
    struct stacks *stacks;     /* the run's stack cache (main.c's) */
    struct jvm_tracker *jvm;   /* the run's JVM tracker (main.c's) */
    const struct pt_options *o;
    struct blocker **b;        /* indexed like the kernel's slots; NULL while free */
    uint64_t start_ns;         /* CLOCK_MONOTONIC, as bpf_ktime_get_ns */
    uint64_t window_start;     /* start of the current interval */
    /* The same instants on the wall clock: a phase starts exactly when the
     * report before it was stamped. */
    struct timespec start_wall, window_wall;
    uint64_t cpu_start_ns, cpu_window_ns;   /* parktrace's own CPU time then */
    struct csp csp;
    struct phases phases;
    uint32_t settled;          /* slots below it were all looked at once, and watched */
    /* Blockers below it waiting for a first stack asked for again, or for
     * their JVM's Java frames to be walked: looked at again at each tick,
     * not only when a report is made. */
    uint32_t pending[COLLECT_PENDING];
    int npending;
    /* Reused from report to report: with thousands of blockers, fresh
     * buffers each second cost more in page faults than the report itself. */
    struct pt_row *rows, *sorted;
    struct pt_row **order;
    struct waker_entry *top;
    uint32_t rows_cap, top_cap;
    /* The slots as read at a report's start, before any is named (their
     * rows' capacity, rows_cap). */
    struct slot_read *reads;
    struct pt_model model;     /* the last report's */
    /* Slots recycled (metrics.md, "Blockers that come and go"): per slot 0,
     * or unpublished (1, since retiring_since[]) or being retired (2). */
    uint8_t *retiring;
    uint64_t *retiring_since;
    /* The slots in state 1, in the order they entered it (some may have
     * left it since): a tick folds those past their grace without reading
     * every slot (fold_graced). */
    uint32_t *grace;
    uint32_t ngrace;
    /* Slots marked to leave the index, taken out together (one system
     * call for up to UNPUBLISH_BATCH: one each was most of parktrace's
     * system calls under H2's 7 000 new blockers a second). */
#define UNPUBLISH_BATCH 1024
    uint32_t unpublishing[UNPUBLISH_BATCH];
    uint32_t nunpublishing;
    uint64_t unpublished_total;    /* slots taken out of the index so far */
    struct retired retired;    /* what the recycled blockers counted */
    uint32_t folded;           /* slots in state 2, not yet given back */
    uint64_t refold_bytes;     /* retired_bytes past which to fold again */
    uint64_t entries_ns;       /* when they last were (return_slots) */
    bool flush;                /* give them back at this recycling, a report is due */
    uint32_t live_blockers;    /* published slots not being recycled, at the last tick */
    uint32_t occupied;         /* those and the ones being recycled */
    uint32_t unpublished;      /* slots in state 1 at the last scan or grace pass */
    uint64_t scanned_ns;       /* when recycle last read every slot */
    uint64_t tallied_entries;  /* the kernel's stack_entries_made at the last tally */
    uint64_t forgot_ns;        /* when exited processes' stacks were last let go */
    uint64_t exits_seen;       /* process_exits at the last look for the dead */
    uint64_t dead_scan_ns;     /* when the stack cache was last looked through */
    uint64_t dead_until_ns;    /* looked through each second until then */
    uint64_t trimmed_ns;       /* when the heap's free pages were last given back */
    struct map_dump scratch, scratch2;   /* kernel tables read whole while recycling */
    struct chain_memory chains;          /* the wait chains' table between reports */
    struct stack_weights weights;        /* sampled stacks' scales (stack_weights.h) */
    uint64_t retired_sampled_ns, retired_unsampled_ns;   /* its sums over retired blockers */
    /* --self-stats: the longest gap between two recyclings, those over
     * 200 ms, and the longest recycling, JVM tick and stack-copy poll. */
    struct {
        uint64_t last_recycle, gap_ns, late, recycle_ns, jvm_ns, samples_ns;
        /* The longest recycling pass's parts: naming and folding the
         * retiring blockers, their table entries, the stack cache. */
        uint64_t fold_ns, entries_ns, forget_ns, retired_max;
    } slow;
    /* Whether a stack waits for work, by stack and naming: one stack is
     * the first of thousands of short-lived blockers. */
    struct { const struct pt_stack *st; uint64_t naming; uint8_t idle; } idle_memo[1024];   /* idle_stack's flags */
};

void collector_init(struct collector *c, struct tracer *t, struct pt_services *sv, struct stacks *stacks,
                    struct jvm_tracker *jvm, const struct pt_options *o);

/* Starts the run's clock (its first window, the lives it counts) now: called
 * again once every probe is attached, as a wait begun while they attached
 * may have been missed, and a window that covered it would read low (an
 * H2 run's two 500 ms parks begun 4 ms after the start were lost so, and
 * its condition read 6% below JFR's). */
void collector_begin(struct collector *c);

/* Housekeeping between reports: unwinds new stack copies and names new
 * blockers while their processes are still alive. */
void collector_tick(struct collector *c);

/* The part of a tick that gives the kernel's blocker table room: cheap, so
 * it runs more often than the rest. */
void collector_recycle(struct collector *c);

/* The same, if the last recycling was a tick or more ago: between the
 * parts of slow work. Returns the ns it took (0: not due). */
uint64_t collector_recycle_due(struct collector *c);

/* New stack copies, in time slices with recycling between them. */
void collector_poll_samples(struct collector *c);

/* What a model holds besides its rows, phases and totals. */
#define MODEL_STACKS 1u        /* the run's waiter stacks and their weights */
#define MODEL_WAKERS 2u        /* with MODEL_STACKS: the waker pairs, their stacks named */

/* Builds the model of a report. An interval report covers the time since
 * the previous one and starts a new window; final and dump cover the whole
 * run. WHAT is MODEL_* flags. The model is the collector's, valid until
 * its next call. */
const struct pt_model *collector_report(struct collector *c, enum pt_report_type type, unsigned what);

/* The blocker of slot IDX, named; NULL when the slot is not in use. */
struct blocker *collector_blocker(struct collector *c, uint32_t idx);

void collector_free(struct collector *c);

/* --self-stats: what the collector keeps for the run (retired sites and
 * stacks, phases) and the heap's use, one line. */
void collector_self_stats(const struct collector *c, FILE *f);
/* The same figures into V, for /metrics. */
struct self_values;
void collector_self_values(const struct collector *c, struct self_values *v);

#endif
