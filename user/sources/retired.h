/* Blockers whose kernel slots were recycled (metrics.md, "Blockers that come
 * and go"): what they counted, kept per (pid, kind, class, waiting site) so
 * that reports, --by class and --by site add up as if nothing had left, and
 * their waiter stacks for the collapsed output. */
#ifndef PT_RETIRED_H
#define PT_RETIRED_H
#include <stdbool.h>
#include <stdint.h>

#include "metrics.h"
#include "model.h"

/* One recycled blocker, as the collector last saw it. */
struct retired_member {
    int pid;
    uint64_t id;                      /* its address (a futex) or object */
    const char *kind, *cls, *site, *comm, *thread;
    const char *cgroup, *container;   /* kept for the run (cgroup_names.h) */
    int ns_pid;
    bool wait, idle;
    const struct pt_stack *first_stack;
    struct pt_counters final;         /* its cumulative counters at the end */
    struct pt_counters prev;          /* those at the current window's start */
    struct pt_window_extra whole, win;
};

struct retired_site {
    int pid;
    uint64_t id;                      /* its first member's, shown while it is its only one */
    const char *kind;
    const char *cgroup, *container;   /* NULL in the deepest fold */
    int ns_pid;
    char cls[256], site[256], comm[PT_MODEL_COMM], thread[PT_MODEL_COMM];
    bool wait, idle;
    const struct pt_stack *first_stack;
    struct pt_counters cur, prev;
    struct pt_window_extra whole, win;
    uint32_t objects, win_objects;
    uint64_t heaviest_ns;             /* the member whose identity the site shows */
    /* The waker stack that ended most of its members' waiting time, as
     * far as their tables told (retired_add_waker). */
    struct pt_waker waker;
};

#define RETIRED_BUCKETS 4096

/* The pid of sites and stacks of processes that have exited, folded
 * together per command once the budget is reached (retired_fold). */
#define PT_RETIRED_EXITED 0

/* A stack a retired site or stack points to: a copy of its own, one per
 * distinct content, so that the stack cache can let the entries of recycled
 * slots go. */
struct retired_frames {
    struct retired_frames *next;
    uint64_t hash;
    struct pt_stack st;
};

struct retired {
    struct retired_site *v;
    int n, cap;
    struct pt_model_stack *stacks;    /* their waiter stacks, merged per (root, stack, leaf) */
    int nstacks, stacks_cap;
    uint64_t count;                   /* blockers retired so far */
    /* Hash chains over v and stacks (index + 1, 0 ends a chain), and the
     * stack copies: a recycled blocker finds its site and stacks without a
     * walk over all of them. */
    int site_head[RETIRED_BUCKETS], *site_next;
    int stack_head[RETIRED_BUCKETS], *stack_next;
    struct retired_frames *frames[RETIRED_BUCKETS];
    uint64_t frames_bytes;            /* what the copies take */
    uint64_t bytes;                   /* what the sites and stacks take */
    uint64_t folds;                   /* retired_fold calls so far */
    /* The copy of a class name by the name: a site's, found once per
     * distinct class rather than by a walk over all sites. */
    struct { const char *cls; } class_memo[256];
    /* The copy of a stack by its address and naming: the same few stacks
     * are the first of thousands of short-lived blockers. */
    struct { const struct pt_stack *st; uint64_t naming; const struct pt_stack *copy; } memo[1024];
};

void retired_add(struct retired *r, const struct retired_member *m);

/* Waits of M's site (M as given to retired_add) ended by waker stack
 * STACK of process COMM: COUNT wakeups, NS of waiting. The site keeps
 * the waker with the most time (a waker seen again adds up). */
void retired_add_waker(struct retired *r, const struct retired_member *m, const struct pt_stack *stack,
                       const char *comm, uint64_t count, uint64_t ns);

/* Adds one waiter stack's weights of a recycled blocker WHO (its leaf,
 * class, pid, kind and role; its name and id are not kept). */
void retired_add_stack(struct retired *r, const char *root, const struct pt_stack *stack,
                       const struct pt_model_stack *who, uint64_t count, uint64_t ns, uint64_t own_count,
                       uint64_t own_ns);

/* One row per site into ROWS (room for r->n), for the window FROM_T..NOW
 * (INTERVAL) or the run since FROM_T; returns how many had anything to
 * show. WAITS and BLOCKERS are added to. */
int retired_rows(const struct retired *r, bool interval, uint64_t from_t, uint64_t now, struct pt_row *rows,
                 uint64_t *waits, uint64_t *blockers);

/* What the sites, stacks and stack copies take, in bytes. */
uint64_t retired_bytes(const struct retired *r);

/* How much of their detail recycled sites keep through a fold. */
enum retired_depth {
    RETIRED_EXITED_SHAPES,   /* exited processes' sites per (command, kind, class, site) */
    RETIRED_EXITED,          /* and without their commands, sites and frames */
    RETIRED_ALL,             /* and live processes' too: one site per (pid, kind, class) */
};

/* Folds the sites and stacks of processes ALIVE says have exited into one
 * site per (command, kind, class, site) and their stacks under pid
 * PT_RETIRED_EXITED, keeping every count and time. Deeper (DEPTH), their
 * commands, sites and stack frames go too (one site per kind and class,
 * one "[exited process]" stack per leaf): what a budget still too small
 * after the first fold comes to; deepest, a live process's sites go the
 * same way (one "[folded]" site per kind and class, one "[folded]" stack
 * per leaf): a process that lives on making blockers at ever new sites. */
void retired_fold(struct retired *r, bool (*alive)(int pid), enum retired_depth depth);

/* A new window begins. */
void retired_roll(struct retired *r);

void retired_free(struct retired *r);

#endif
