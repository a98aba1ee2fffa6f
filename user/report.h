/* One report (interval, final or dump), ready for a formatter. */
#ifndef PT_REPORT_H
#define PT_REPORT_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "../bpf/parktrace.h"
#include "metrics.h"
#include "phases.h"
#include "stacks.h"

enum pt_report_type { PT_REPORT_INTERVAL, PT_REPORT_FINAL, PT_REPORT_DUMP };

struct pt_row {
    const char *kind;
    int pid;
    const char *comm;
    uint64_t id;
    const char *name;          /* NULL when the address is in no named global */
    const char *cls;
    bool wait;
    struct pt_figures fig;
    bool has_csp;
    double csp;
    const char *first_thread;
    const struct pt_stack *first_stack;
    const char *top_frame;
    /* The stack that ended most of this blocker's wait time by waking its
     * waiters, over the run so far; NULL when no waker was seen. */
    const struct pt_stack *waker_stack;
    const char *waker_comm;
    uint64_t waker_ns, waker_wakeups;
    uint32_t slot;             /* the kernel's slot (before grouping) */
    bool in_phase;             /* an interval report's lock in a CSP phase */
};

struct pt_report {
    enum pt_report_type type;
    struct timespec wall;      /* when the window ended */
    uint64_t window_ns;
    uint64_t waits, blockers;
    uint64_t drops[PT_DROP_COUNT];
    uint64_t dropped_events, dropped_stacks;
    uint64_t stacks, truncated_stacks;   /* waiter stacks so far, and those cut short */
    bool sees_fast_parks;      /* --probes uprobes: fast_parks is measured */
    struct pt_row *rows;
    int nrows;
    const struct phase *phases;   /* every phase so far, closed or open */
    int nphases;
};

/* Each report leaves in one write. The writers return 0, or -1 when F did
 * not take the report (errno says why, as report_flush). */
int report_text_write(FILE *f, const struct pt_report *r, bool live);
int report_json_write(FILE *f, const struct pt_report *r);
/* Flushes F: 0, or -1 when this or an earlier write to F failed. */
int report_flush(FILE *f);
const char *report_type_name(enum pt_report_type t);

#endif
