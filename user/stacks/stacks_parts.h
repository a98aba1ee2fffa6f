/* What the stack cache's files share (stacks.c, stacks_names.c,
 * stacks_forget.c): its table and entries. Not for other code, which uses
 * stacks.h. */
#ifndef PT_STACKS_PARTS_H
#define PT_STACKS_PARTS_H
#include <stdbool.h>
#include <stdint.h>

#include "../bpf/parktrace.h"
#include "stack_maps.h"
#include "stacks.h"

/* A soak's churn keeps some 25 000 entries: at 4 096 buckets, lookup was a
 * tenth of parktrace's CPU while it recycled. */
#define BUCKETS 32768

struct entry {
    struct entry *next;
    struct entry *slot_next;   /* its slot's chain (by_slot), blockers' entries only */
    uint32_t slot;
    int tgid, stack_id;
    uint64_t *pcs;           /* unwound pcs, or NULL */
    char **java;             /* per unwound pc, its Java name or NULL */
    int npcs;
    bool truncated;          /* the unwind stopped early */
    bool blind;              /* walked before its JVM was known (PT_USTACK_EARLY) */
    bool tallied;            /* counted by stacks_tally */
    bool lost;               /* the kernel let it go before it was copied (counted in stacks.lost) */
    bool named;
    bool jit_pending;        /* some JIT frame waits for a newer perf map */
    bool unclaimed;          /* some frame in anonymous memory no namer took (it reads [unknown]) */
    bool retrying;           /* on the retry list (stacks_retry_names) */
    bool compact;            /* an unused template kept as pcs alone (stacks_trim_templates) */
    bool doomed;             /* being let go by stacks_trim_templates */
    int canon_id;            /* stacks_canonical's answer, while the naming it read is */
    uint64_t canon_naming;
    bool jvm_seen;           /* its process was a live JVM at a retry */
    uint64_t since_ns;       /* when it joined the retry list */
    /* A blocker's entry of a kernel-unwound stack names from its process's
     * template (TMPL); a template counts those entries (REFS) and, when
     * none is left, since when (IDLE_NS): see stacks_trim_templates. */
    struct entry *tmpl;
    uint32_t refs;
    uint64_t idle_ns;
    struct pt_stack st;
};

#define CANON_BUCKETS 1024

/* Each blocker's entries and call-path marks are also chained by slot, so
 * that recycling lets a few thousand slots go without reading the whole
 * table (a pass over its 32 768 buckets at every return of slots was a
 * twentieth of parktrace's CPU under H2's churn). */
#define SLOT_BUCKETS 16384

static inline unsigned stacks_bucket(uint32_t slot, int tgid, int stack_id)
{
    unsigned x = slot * 0x9E3779B1u ^ (unsigned)tgid * 0x85EBCA77u ^ (unsigned)stack_id * 0xC2B2AE3Du;
    return (x ^ x >> 15) % BUCKETS;
}

static inline unsigned canon_bucket(uint64_t hash, uint32_t slot, int tgid)
{
    return (unsigned)((hash ^ slot * 40503u ^ (unsigned)tgid) % CANON_BUCKETS);
}

/* The first stack id of each call path (stacks_canonical). */
struct canon {
    struct canon *next;
    struct canon *slot_next;   /* its slot's chain (canon_by_slot) */
    uint32_t slot;
    int tgid, stack_id;
    uint64_t hash;
};

/* Stacks with frames to name again (stacks_retry_names): at most every
 * RETRY_GAP_NS; a stack whose process never turns out to be a live JVM
 * leaves the list after RETRY_GIVE_UP_NS. */
#define RETRY_GAP_NS 100000000ULL
#define RETRY_GIVE_UP_NS 30000000000ULL

struct stacks {
    struct entry *table[BUCKETS];
    struct canon *canon[CANON_BUCKETS];
    struct entry *by_slot[SLOT_BUCKETS];
    struct canon *canon_by_slot[SLOT_BUCKETS];
    struct entry **retry;     /* entries with frames a namer may still take */
    int nretry, retry_cap;
    uint64_t retry_ns;        /* when stacks_retry_names last looked */
    struct stack_maps kernel; /* the kernel's stack tables */
    struct pt_ustack *us;     /* scratch, too big for the stack */
    struct pt_sample *smp;    /* the same */
    struct stacks_java_namer java_namer;
    struct pt_services *sv;   /* maps, symbols and unwinding */
    uint64_t tally_n, tally_truncated;
    struct map_dump tally_dump;   /* the stack table, read for the tally */
    uint64_t lost;            /* kernel-unwound stacks gone before they could be copied */
    uint64_t namings;         /* stacks named so far: each naming's pt_stack.naming */
    uint64_t trimmed_ns;      /* when stacks_trim_templates last looked */
    uint64_t templates_trimmed;
    int ncompact;             /* templates kept as pcs alone */
};

/* A kernel-unwound stack is the same under every blocker: it is loaded and
 * named once per process, under this slot, at its first sight (a JVM's
 * stacks when they are new, while their JIT code is known). The entries of
 * (blocker, stack) pairs only count the pair and point here. */
#define KSTACK_TEMPLATE UINT32_MAX

/* stacks.c */
struct entry *stacks_resolve_entry(struct stacks *s, uint32_t slot, int tgid, int stack_id,
                                   const struct pt_stack **st);
void stacks_free_entry(struct entry *e);

/* stacks_names.c */
void stacks_unname(struct entry *e);
void stacks_name_java(struct stacks *s, int tgid, const struct pt_sample *smp, const uint64_t *fps, struct entry *e);
void stacks_rename_entry(struct stacks *s, struct entry *e);
void stacks_retry_names(struct stacks *s);
void stacks_name_entry(struct stacks *s, struct entry *e);

#endif
