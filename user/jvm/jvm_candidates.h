/* The processes that may be JVMs, by pid: the tracker's to-do list. A user
 * can fill it (every process that execs lands here), so it is bounded and
 * evicts: what it no longer needs first, then the oldest still pending. */
#ifndef PT_JVM_CANDIDATES_H
#define PT_JVM_CANDIDATES_H
#include <stdbool.h>
#include <stdint.h>

#define JVM_CANDIDATES_MAX 16384

struct jvm_candidate {
    int pid;
    bool settled;         /* a JVM, or no libjvm SETTLE_NS after first seen */
    uint64_t first_seen;
    uint64_t next_try;    /* a JVM still starting is looked at again from then */
    bool exec;            /* exec'd while traced: looked at before the rest */
    uint64_t go_looked;   /* the program last looked at for Go (go_tracker_look), 0: none */
};

/* The tracker's list, made and freed by it. */
struct jvm_candidates;
struct jvm_candidates *jvm_candidates_new(void);
void jvm_candidates_free(struct jvm_candidates *jc);

/* PID's entry, or NULL. */
struct jvm_candidate *jvm_candidates_find(struct jvm_candidates *jc, int pid);

/* PID's entry, added (first seen NOW) if new. When the table is full, the
 * settled and the exited go first, then the oldest pending entry (counted
 * in *EVICTED). Pointers returned earlier are invalid after an add. */
struct jvm_candidate *jvm_candidates_add(struct jvm_candidates *jc, int pid, uint64_t now, uint64_t *evicted);

/* The N-th entry (0 <= N < jvm_candidates_count()). */
struct jvm_candidate *jvm_candidates_at(struct jvm_candidates *jc, int n);
int jvm_candidates_count(const struct jvm_candidates *jc);

#endif
