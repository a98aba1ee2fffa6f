/* What the collector's files share among themselves (collect.c,
 * collect_recycle.c, collect_report.c, collect_stacks.c); not for other
 * code, which uses collect.h. */
#ifndef PT_COLLECT_PARTS_H
#define PT_COLLECT_PARTS_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "collect.h"
#include "wakers.h"

static inline bool slot_valid(const struct pt_slot *s)
{
    return __atomic_load_n(&s->valid, __ATOMIC_ACQUIRE) != 0;
}

/* Whether ROW's waits are goroutines' (go-park): no thread's time, so
 * neither its process's thread time nor a CSP (docs/go.md). */
static inline bool row_of_goroutines(const struct pt_row *row)
{
    return strcmp(row->kind, pt_kind_names[PT_KIND_GO_PARK]) == 0;
}

/* What identifies the blocker of slot S to a user: a futex is its
 * address; a Java blocker is its object. */
static inline uint64_t slot_blocker_id(const struct pt_slot *s)
{
    return (s->key.kind & 0xff) == PT_KIND_FUTEX ? s->first_uaddr : s->key.addr;
}

/* collect.c */
struct blocker *collector_record(struct collector *c, uint32_t idx);
void collector_free_record(struct collector *c, uint32_t idx);
void collector_resolve(struct collector *c, uint32_t idx);
void collector_note_max(uint64_t *max, uint64_t v);
void collector_note_slow(const struct collector *c, uint64_t *max, const char *part, uint64_t ns);

/* collect_recycle.c */
void collector_unpublish(struct collector *c, uint32_t i, uint64_t now);
void collector_unpublish_flush(struct collector *c, uint64_t now);
void collector_recycle_at(struct collector *c, uint64_t now);

/* collect_report.c */
/* P grown to N bytes (out_of_memory when it cannot be). */
void *collector_realloc(void *p, size_t n);
void collector_snapshot(const struct pt_slot *s, uint64_t now, int hist_slots, struct pt_counters *out);
void collector_feed_phase(struct collector *c, struct blocker *b, const struct pt_row *row, struct timespec win);
const char *blocker_top_frame(struct blocker *b);
void row_set_cgroup(struct pt_row *row, const struct cgroup_name *cg, int ns_pid);
bool blocker_idle(struct collector *c, struct blocker *b, const struct pt_slot *s);

/* Thread time per process in the window: its waits, or its wait-role
 * (idle) waits. Rows of one process mostly come together: the last one
 * added is looked at first. */
struct pid_sums {
    struct { int pid; uint64_t ns; } *v;
    int n, cap, last;
};

/* collect_csp.c */
void pid_sum_add(struct pid_sums *l, int pid, uint64_t ns);
void apply_csp(struct collector *c, struct pt_model *r, const struct pid_sums *idle, uint64_t now,
                     bool interval);
void model_processes(struct collector *c, struct pt_model *r, const struct pid_sums *idle,
                     const struct pid_sums *waited, uint64_t now, bool interval);

/* collect_stacks.c */
/* The name of process TGID for a stack of blocker B's, copied into OUT. */
void collector_comm_of(struct collector *c, int tgid, const struct blocker *b, char out[PT_MODEL_COMM]);
/* The waiter's process TGID of a stack of B: its name, owner and cgroup. */
void stack_owner(struct collector *c, int tgid, const struct blocker *b, struct pt_model_stack *ms);
void stack_blocker(struct collector *c, uint32_t slot, const struct blocker *b, struct pt_model_stack *ms);
bool first_stack_entry(const struct collector *c, uint32_t slot, uint32_t tgid, int32_t stack_id);
void collector_model_stacks(struct collector *c, struct pt_model *m, const struct wakers *w, bool pairs);

#endif
