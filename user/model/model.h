/* The snapshot model: everything one report says, built once per window by
 * the collector (collect.c) and read by every writer (writer.h). Plain
 * data: no kernel header, no map, no service behind it. A writer needs
 * nothing but this, a FILE and its options, so a new output format is one
 * new file.
 *
 *   kernel maps -> collector -> model -> writers
 *
 * What the model points to (stacks, names, classes) belongs to the
 * collector and its services and stays valid until the collector's next
 * call (tick, report or free); a process name is copied, since the service
 * that knows it may forget it. */
#ifndef PT_MODEL_H
#define PT_MODEL_H
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "figures.h"
#include "frames.h"

enum pt_report_type { PT_REPORT_INTERVAL, PT_REPORT_FINAL, PT_REPORT_DUMP };

/* A process or thread name: the kernel's 16 bytes and a NUL. */
#define PT_MODEL_COMM 17
/* A process's owner that could not be read (it had exited). */
#define PT_UID_UNKNOWN UINT32_MAX

/* A waker stack with the waits it ended: what a group of blockers (a
 * folded row, a recycled site) keeps of its members' wakers. */
struct pt_waker {
    const struct pt_stack *stack;   /* NULL: none seen */
    const char *top_frame;          /* of stack, where known */
    char comm[PT_MODEL_COMM];
    uint64_t ns, wakeups;
};

/* Adds ADD to the tally KEPT (metrics.md, "The waker on every contended
 * row"): the same stack adds up, a heavier one takes its place. */
static inline void pt_waker_tally(struct pt_waker *kept, const struct pt_waker *add)
{
    if (!add->stack)
        return;
    if (kept->stack == add->stack) {
        kept->ns += add->ns;
        kept->wakeups += add->wakeups;
    } else if (!kept->stack || add->ns > kept->ns) {
        *kept = *add;
    }
}

/* One row: a blocker, or with --by class|site a group of them. */
struct pt_row {
    const char *kind;          /* futex, jvm-park, jvm-monitor, jvm-wait */
    int pid;                   /* -1 for a row of several processes (--by cgroup) */
    const char *comm;
    /* Its process's cgroup v2 path and the container id that names
     * (NULL: unknown, none), and its pid in its own pid namespace (0:
     * ours). Kept for the run by the services: compared by address. */
    const char *cgroup, *container;
    int ns_pid;
    uint64_t id;
    const char *name;          /* NULL when the address is in no named global */
    const char *cls;
    bool wait;                 /* role wait, else lock */
    struct pt_figures fig;
    bool has_csp;
    double csp;
    bool in_phase;             /* an interval report's lock in a CSP phase */
    const char *first_thread;
    const struct pt_stack *first_stack;
    const char *top_frame;     /* of first_stack; NULL when unknown */
    /* The stack that ended most of this blocker's wait time by waking its
     * waiters, over the run so far; NULL when no waker was seen. */
    const struct pt_stack *waker_stack;
    const char *waker_top_frame;
    char waker_comm[PT_MODEL_COMM];
    uint64_t waker_ns, waker_wakeups;
    /* How many blockers the row stands for: 1, or more for a group (--by)
     * or for the small blockers of one site folded into one row. */
    uint32_t objects;
    /* A runtime's idle housekeeping (a service thread or pool worker
     * waiting for work, idle.h), ranked after the contention. */
    bool idle;
    uint32_t src;              /* the collector's own index of the blocker; no writer's business */
};

/* A traced process's thread time in the window: working (metrics.md, CSP)
 * and idle (waiting for an event). */
struct pt_model_process {
    int pid;
    char comm[PT_MODEL_COMM];
    const char *cgroup, *container;   /* as pt_row's */
    int ns_pid;
    uint64_t working_ns, idle_ns;
    /* Its threads' time alive in the window (working + idle), and the part
     * of it they spent in waits on any blocker, shown or not: the second
     * is never more than the first (metrics.md). */
    uint64_t lived_ns, thread_time_ns;
};

/* A stretch of intervals in which a lock's CSP stayed at or above
 * --phase-threshold. */
struct pt_model_phase {
    int pid;
    uint64_t id;
    const char *cls;
    const char *name;             /* the lock's row name, NULL when it has none */
    struct timespec start, end;   /* end only once closed */
    bool open;
    double peak, mean;
};

/* One waiter call path on one blocker, with its weights: a collapsed line. */
struct pt_model_stack {
    char root[PT_MODEL_COMM];     /* the waiter's process */
    const struct pt_stack *stack;
    const char *leaf;             /* the blocker's class */
    uint64_t count, ns;           /* every wait on this path */
    uint64_t own_count, own_ns;   /* those of them no waker was seen for */
    /* The blocker, for the outputs that label each stack (pprof): its
     * process, kind, role, and its name, else its id ("0x..."; a recycled
     * blocker's stacks say "[recycled]"). */
    int pid;
    const char *kind;
    bool wait;
    const char *name;
    char id[24];
    uint32_t uid;                 /* the waiter's process's owner (effective uid), or PT_UID_UNKNOWN */
    const char *cgroup, *container;   /* the waiter's process's, as pt_row's */
    /* Where the blocker's waits most often end up (the end of the chain
     * with the most time of those it starts: running, io, ...), NULL: none. */
    const char *chain_end;
};

/* Waits on one waiter call path ended by one waker call path. They are
 * also in the count and ns (not own_*) of their waiter's pt_model_stack,
 * when the kernel's table has an entry for that waiter stack. */
struct pt_model_waker {
    char root[PT_MODEL_COMM];
    const struct pt_stack *stack;
    const char *leaf;
    const struct pt_stack *waker;
    char waker_root[PT_MODEL_COMM];   /* the waker's process */
    uint64_t count, ns;
    /* The blocker, as pt_model_stack labels it. */
    int pid;
    const char *kind;
    bool wait;
    const char *name;
    char id[24];
};

/* What a report's rows leave out (--top, --print-threshold): how many
 * rows, the blockers they stand for, their waits and their time. The rows
 * shown and this add up to the totals. */
struct pt_rest {
    uint64_t rows, objects, parks, thread_time_ns;
};

struct pt_totals {
    uint64_t waits, blockers;             /* in the window, printed or not */
    uint64_t thread_time_ns;              /* their time, printed or not */
    struct pt_rest rest;
    uint64_t dropped_events, dropped_stacks;
    uint64_t stacks, truncated_stacks;    /* waiter stacks so far, and those cut short */
    uint64_t live_blockers;               /* in the kernel's table now */
    uint64_t recycled_blockers;           /* let go since the start, kept in their sites */
    uint64_t phases_forgotten;            /* closed phases let go, the oldest first (phases.h) */
    /* Stacks: taken within stack_budget of each CPU (0: every stack);
     * since the start, waits charged to a stack taken at random over the
     * budget, the time they stand for (weighed), and waits left uncharged (their own stack
     * left out). With the stacks modelled: the exact wait time of the
     * blockers with stacks, and of those without (every walk left out). */
    double stack_budget;
    uint64_t stack_samples, stack_sampled_ns, stack_samples_lost;
    uint64_t chains_unread;         /* waits that kept a stack but no chain: the chains' budget spent */
    uint64_t stack_sampled_sq;      /* their weighed times squared, in (2^10 ns)^2 */
    uint64_t stack_time_ns, stack_unsampled_ns;
};

/* Wait chains (metrics.md, "Wait chains"): a waiting thread, the holder
 * of what it waits on, what that one waits on and its holder, and so on;
 * the last link has no blocker and ends the chain (end). */
#define PT_MODEL_CHAIN_LINKS 5
struct pt_model_chain_link {
    int pid;
    char comm[PT_MODEL_COMM];     /* its process */
    char thread[PT_MODEL_COMM];   /* its own name ("" where it has exited) */
    /* What it waits on: kind NULL for the last link. */
    const char *kind, *cls, *name, *top_frame;
    uint64_t id;
};
struct pt_model_chain {
    uint64_t time_ns, waits;
    bool cycle;
    const char *end;              /* running, runnable, sleeping, io, cycle, unknown */
    const char *end_frame;        /* NULL: not known */
    int nlinks;
    struct pt_model_chain_link links[PT_MODEL_CHAIN_LINKS];
};

struct pt_model {
    enum pt_report_type type;
    struct timespec wall;         /* when the window ended */
    uint64_t window_ns;
    struct pt_totals totals;
    uint64_t self_cpu_ns;         /* parktrace's own CPU time in the window */
    bool sees_fast_parks;         /* --probes uprobes: fast_parks is measured */
    struct pt_row *rows;          /* ranked, at most --top */
    int nrows;
    struct pt_model_phase *phases;   /* every phase so far, closed or open */
    int nphases;
    struct pt_model_process *procs;  /* processes with a row and a known alive time */
    int nprocs;
    bool idle_last;               /* idle rows come after the contention (no --show-idle) */
    /* The run's waiter stacks and waker pairs, in the kernel's table order;
     * only in a model built with them (collector_report's MODEL_STACKS). */
    bool has_stacks;
    bool has_wakers;              /* and the pairs (MODEL_WAKERS) */
    struct pt_model_stack *stacks;
    int nstacks;
    struct pt_model_waker *wakers;
    int nwakers;
    /* The top wait chains (--chains), ranked by time; has_chains: read. */
    bool has_chains;
    struct pt_model_chain *chains;
    int nchains;
    /* Capacities of the arrays the model owns (phases, stacks, wakers,
     * chains): kept from window to window. */
    int phases_cap, stacks_cap, wakers_cap, procs_cap, chains_cap;
};

const char *model_type_name(enum pt_report_type t);

/* Room for one more phase, stack or waker pair (zeroed); exits on out of
 * memory, as the collector's other tables do. */
struct pt_model_phase *model_add_phase(struct pt_model *m);
struct pt_model_stack *model_add_stack(struct pt_model *m);
struct pt_model_waker *model_add_waker(struct pt_model *m);
struct pt_model_process *model_add_process(struct pt_model *m);
struct pt_model_chain *model_add_chain(struct pt_model *m);

/* The part of the stack time (%) resting on stacks taken at random: their
 * weighed time is an estimate, so it is held to what the stacks hold. */
double model_stack_sampled_pct(const struct pt_totals *t);
/* How many samples of equal weight T's random walks are worth, (sum w)^2 /
 * sum w^2 over their weighed times: what a share estimated from them is as
 * precise as (its standard error goes with one over its square root). */
double model_stack_samples_effective(const struct pt_totals *t);

/* Empties M for the next window, keeping its arrays. */
void model_clear(struct pt_model *m);

/* Frees the arrays M owns (not its rows). */
void model_free(struct pt_model *m);

#endif
