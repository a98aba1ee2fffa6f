#include "stacks.h"

#include <signal.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/parktrace.h"
#include "jvm_frames.h"
#include "stack_maps.h"
#include "monotonic.h"
#include "procmaps.h"
#include "services.h"
#include "unwind.h"
#include "unwind_tables.h"

/* A soak's churn keeps some 25 000 entries: at 4 096 buckets, lookup was a
 * tenth of parktrace's CPU while it recycled. */
#define BUCKETS 32768

struct entry {
    struct entry *next;
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
    bool retrying;           /* on the retry list (retry_names) */
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

/* The first stack id of each call path (stacks_canonical). */
struct canon {
    struct canon *next;
    uint32_t slot;
    int tgid, stack_id;
    uint64_t hash;
};

/* Stacks with frames to name again (retry_names): at most every
 * RETRY_GAP_NS; a stack whose process never turns out to be a live JVM
 * leaves the list after RETRY_GIVE_UP_NS. */
#define RETRY_GAP_NS 100000000ULL
#define RETRY_GIVE_UP_NS 30000000000ULL

struct stacks {
    struct entry *table[BUCKETS];
    struct canon *canon[CANON_BUCKETS];
    struct entry **retry;     /* entries with frames a namer may still take */
    int nretry, retry_cap;
    uint64_t retry_ns;        /* when retry_names last looked */
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

static const struct pt_stack empty;

struct stacks *stacks_new(const struct stack_maps *kernel, const struct stacks_java_namer *namer,
                          struct pt_services *sv)
{
    struct stacks *s = calloc(1, sizeof(*s));
    if (s) {
        s->us = malloc(sizeof(*s->us));
        s->smp = malloc(sizeof(*s->smp));
    }
    if (!s || !s->us || !s->smp) {
        fprintf(stderr, "parktrace: out of memory for the stack table\n");
        stacks_free(s);
        return NULL;
    }
    if (namer)
        s->java_namer = *namer;
    s->sv = sv;
    s->kernel = *kernel;
    return s;
}

static bool java_name(struct stacks *s, int pid, uint64_t pc, uint64_t fp, const struct pt_sample *smp, char *out,
                      size_t len)
{
    return s->java_namer.name && s->java_namer.name(s->java_namer.ctx, pid, pc, fp, smp, out, len);
}

static bool kernel_unwound(int stack_id)
{
    return stack_id >= 0 && (stack_id & PT_USTACK_ID);
}

static struct entry *lookup(struct stacks *s, uint32_t slot, int tgid, int stack_id);
static void rename_entry(struct stacks *s, struct entry *e);
static void name_java(struct stacks *s, int tgid, const struct pt_sample *smp, const uint64_t *fps, struct entry *e);

/* A kernel-unwound stack is the same under every blocker: it is loaded and
 * named once per process, under this slot, at its first sight (a JVM's
 * stacks when they are new, while their JIT code is known). The entries of
 * (blocker, stack) pairs only count the pair and point here. */
#define KSTACK_TEMPLATE UINT32_MAX

/* A stack the kernel unwound from CFI rows: its pcs, whole, and the names of
 * its Java frames (taken when the stack was new, while the JVM ran). */
static void load_ustack(struct stacks *s, struct entry *e)
{
    struct pt_ustack *us = s->us;
    if (s->kernel.ustacks_fd < 0)
        return;
    if (!stack_maps_ustack(&s->kernel, e->stack_id, us)) {
        /* Its new-stack event was lost (a full ring) and the table let it
         * go: counted, and taken if it is walked and stored again. */
        s->lost += !e->lost;
        e->lost = true;
        return;
    }
    if (e->lost) {
        s->lost--;
        e->lost = false;
    }
    int n = us->nr < PT_MAX_FRAMES ? (int)us->nr : PT_MAX_FRAMES;
    e->pcs = malloc((size_t)(n ? n : 1) * sizeof(*e->pcs));
    memcpy(e->pcs, us->ip, (size_t)n * sizeof(*e->pcs));
    e->npcs = n;
    e->truncated = (us->flags & PT_USTACK_TRUNCATED) || n == 0;
    e->blind = (us->flags & PT_USTACK_EARLY) != 0;
    /* Cut short: perhaps in a library loaded since the process's tables
     * were made (dlopen); the next walks get fresh ones. */
    if (us->flags & PT_USTACK_TRUNCATED)
        unwind_tables_refresh(s->sv->tables, e->tgid);
    name_java(s, e->tgid, NULL, NULL, e);
}

void stacks_name_kernel_stack(struct stacks *s, int tgid, int stack_id)
{
    struct entry *e = lookup(s, KSTACK_TEMPLATE, tgid, stack_id);
    if (e->lost) {      /* stored again: this time it is there */
        load_ustack(s, e);
        if (e->pcs)
            rename_entry(s, e);
    }
}

uint64_t stacks_lost(const struct stacks *s)
{
    return s->lost;
}

void stacks_usage(const struct stacks *s, size_t *entries, size_t *templates, size_t *bytes)
{
    *entries = *templates = *bytes = 0;
    for (int h = 0; h < BUCKETS; h++)
        for (const struct entry *e = s->table[h]; e; e = e->next) {
            (*entries)++;
            *templates += e->slot == KSTACK_TEMPLATE;
            *bytes += sizeof(*e) + (size_t)e->npcs * sizeof(*e->pcs) + (size_t)e->st.n * sizeof(*e->st.frames);
            for (int i = 0; i < e->st.n; i++)
                *bytes += (e->st.frames[i].name ? strlen(e->st.frames[i].name) + 1 : 0) +
                          (e->st.frames[i].module ? strlen(e->st.frames[i].module) + 1 : 0);
            for (int i = 0; e->java && i < e->npcs; i++)
                *bytes += e->java[i] ? strlen(e->java[i]) + 1 : 0;
        }
}

static struct entry *lookup(struct stacks *s, uint32_t slot, int tgid, int stack_id)
{
    unsigned x = slot * 0x9E3779B1u ^ (unsigned)tgid * 0x85EBCA77u ^ (unsigned)stack_id * 0xC2B2AE3Du;
    unsigned h = (x ^ x >> 15) % BUCKETS;
    for (struct entry *e = s->table[h]; e; e = e->next)
        if (e->slot == slot && e->tgid == tgid && e->stack_id == stack_id)
            return e;
    struct entry *e = calloc(1, sizeof(*e));
    e->slot = slot;
    e->tgid = tgid;
    e->stack_id = stack_id;
    e->truncated = true;     /* until an unwind says otherwise */
    e->next = s->table[h];
    s->table[h] = e;
    if (kernel_unwound(stack_id)) {
        if (slot == KSTACK_TEMPLATE) {
            e->idle_ns = monotonic_ns();
            load_ustack(s, e);
        } else {
            e->tmpl = lookup(s, KSTACK_TEMPLATE, tgid, stack_id);
            e->tmpl->refs++;
            if (e->tmpl->compact) {    /* in use again: compacted again only once unused */
                e->tmpl->compact = false;
                s->ncompact--;
            }
            e->truncated = e->tmpl->truncated;
            e->blind = e->tmpl->blind;
        }
    }
    return e;
}

static void unname(struct entry *e)
{
    for (int i = 0; i < e->st.n; i++)
        frame_free(&e->st.frames[i]);
    free(e->st.frames);
    e->st = empty;
    e->named = false;
}

/* The address to name frame I of PCS by: a return address's call, or an
 * interpreted frame's Method* as the kernel marked it. */
static uint64_t lookup_pc(const uint64_t *pcs, int i)
{
    return i > 0 && !(pcs[i] & PT_FRAME_METHOD) ? pcs[i] - 1 : pcs[i];
}

/* Whether frame I of E would be named [unknown]: no namer took it and it
 * lies in no mapped file (anonymous memory: a JIT's code). */
static bool frame_unclaimed(struct stacks *s, const struct entry *e, int i)
{
    if ((e->java && e->java[i]) || (e->pcs[i] & PT_FRAME_METHOD))
        return false;
    struct pm_map *m = procmaps_find(procmaps_get(s->sv->maps, e->tgid), lookup_pc(e->pcs, i));
    return !m || !m->path;
}

static void want_retry(struct stacks *s, struct entry *e)
{
    if (e->retrying || !(e->unclaimed || e->jit_pending))
        return;
    if (s->nretry == s->retry_cap) {
        int cap = s->retry_cap ? 2 * s->retry_cap : 64;
        struct entry **r = realloc(s->retry, (size_t)cap * sizeof(*r));
        if (!r)
            return;    /* named as it is */
        s->retry = r;
        s->retry_cap = cap;
    }
    s->retry[s->nretry++] = e;
    e->retrying = true;
    e->since_ns = monotonic_ns();
}

/* Asks the namer for frame I of E again; true when its name changed. */
static bool name_java_frame(struct stacks *s, struct entry *e, int i, const struct pt_sample *smp, uint64_t fp)
{
    char name[512];
    if (!java_name(s, e->tgid, lookup_pc(e->pcs, i), fp, smp, name, sizeof(name)))
        return false;
    if (!e->java && !(e->java = calloc((size_t)e->npcs, sizeof(*e->java))))
        return false;
    if (e->java[i] && strcmp(e->java[i], name) == 0)
        return false;
    free(e->java[i]);
    e->java[i] = strdup(name);
    return true;
}

/* What is left to name in E: JIT code the perf map did not have, frames
 * no namer took (the JVM was not known yet). */
static void note_left(struct stacks *s, struct entry *e)
{
    e->jit_pending = e->unclaimed = false;
    for (int i = 0; i < e->npcs; i++) {
        if (e->java && e->java[i])
            e->jit_pending |= strcmp(e->java[i], JVM_FRAME_UNNAMED) == 0;
        else
            e->unclaimed |= frame_unclaimed(s, e, i);
    }
}

/* Java frames are named now, while the JVM (and the stack copy, if any:
 * SMP and FPS may be NULL) are at hand. A frame that cannot be named yet
 * puts the stack on the retry list. */
static void name_java(struct stacks *s, int tgid, const struct pt_sample *smp, const uint64_t *fps, struct entry *e)
{
    (void)tgid;
    for (int i = 0; i < e->npcs; i++)
        name_java_frame(s, e, i, smp, fps ? fps[i] : 0);
    /* A frame named: the JVM was known, and when it has exited a retry is
     * its last. */
    e->jvm_seen = e->java != NULL;
    note_left(s, e);
    want_retry(s, e);
}

static void name_entry(struct stacks *s, struct entry *e);

/* Names a named entry again, in place: the collector keeps pointers to
 * entries' stacks (a blocker's first stack), which must never read empty. */
static void rename_entry(struct stacks *s, struct entry *e)
{
    if (!e->named)
        return;
    struct pt_stack old = e->st;
    e->st = empty;
    e->named = false;
    name_entry(s, e);
    for (int i = 0; i < old.n; i++)
        frame_free(&old.frames[i]);
    free(old.frames);
}

/* Whether process TGID is a live JVM its namer follows (the namer's
 * answer for a bare PT_FRAME_METHOD), remembered for one round. */
struct live_memo {
    int tgid[32];
    bool live[32];
    int n;
};

static bool jvm_live(struct stacks *s, struct live_memo *m, int tgid)
{
    char name[64];
    for (int i = 0; i < m->n; i++)
        if (m->tgid[i] == tgid)
            return m->live[i];
    bool live = java_name(s, tgid, PT_FRAME_METHOD, 0, NULL, name, sizeof(name));
    if (m->n < 32) {
        m->tgid[m->n] = tgid;
        m->live[m->n++] = live;
    }
    return live;
}

/* Stacks named before their JVM was known (its code cache, its perf map),
 * or with JIT code compiled after the JVM last wrote its perf map, are
 * named again: once their process is a live JVM (its frames then are all
 * it will ever name; JIT code is asked for while the JVM lives, the
 * tracker limiting how often it asks for a perf map), once more from what
 * the namer keeps when that JVM has exited, and never past
 * RETRY_GIVE_UP_NS when the process does not turn out to be a JVM. Only
 * the listed stacks are looked at, at most every RETRY_GAP_NS. */
static void retry_names(struct stacks *s)
{
    uint64_t now = monotonic_ns();
    if (!s->nretry || now - s->retry_ns < RETRY_GAP_NS)
        return;
    s->retry_ns = now;
    struct live_memo memo = {.n = 0};
    int kept = 0;
    for (int k = 0; k < s->nretry; k++) {
        struct entry *e = s->retry[k];
        bool live = jvm_live(s, &memo, e->tgid), done;
        if (live || e->jvm_seen) {
            bool renamed = false;
            for (int i = 0; i < e->npcs; i++)
                if ((e->java && e->java[i]) ? strcmp(e->java[i], JVM_FRAME_UNNAMED) == 0 : frame_unclaimed(s, e, i))
                    renamed |= name_java_frame(s, e, i, NULL, 0);
            if (renamed)
                rename_entry(s, e);
            note_left(s, e);
            /* A live JVM's namer takes every frame in its code cache: what
             * it left is not Java code. An exited JVM had its last try. */
            done = !live || !e->jit_pending;
            e->jvm_seen = true;
        } else {
            done = now - e->since_ns > RETRY_GIVE_UP_NS;
        }
        if (done)
            e->retrying = false;
        else
            s->retry[kept++] = e;
    }
    s->nretry = kept;
}

static int by_tgid(const void *a, const void *b)
{
    uint32_t x = ((const struct pt_sample_key *)a)->tgid, y = ((const struct pt_sample_key *)b)->tgid;
    return (x > y) - (x < y);
}

#define POLL_KEYS 256   /* stack copies taken per call */

bool stacks_poll_samples(struct stacks *s, uint64_t deadline)
{
    struct pt_sample *smp = s->smp;
    uint64_t pcs[PT_MAX_FRAMES], fps[PT_MAX_FRAMES];
    bool truncated;

    if (s->kernel.samples_fd < 0)
        return false;
    /* Deleting while iterating restarts the walk; collect keys first. */
    struct pt_sample_key keys[POLL_KEYS];
    int nkeys = stack_maps_sample_keys(&s->kernel, keys, POLL_KEYS);
    /* A process's samples in a row: with the kernel's walk, its unwinder
     * (and the ELF files it maps) can go as soon as they are done. */
    qsort(keys, (size_t)nkeys, sizeof(*keys), by_tgid);
    for (int i = 0; i < nkeys; i++) {
        if (!stack_maps_sample(&s->kernel, &keys[i], smp))
            continue;
        struct entry *e = lookup(s, keys[i].slot, (int)keys[i].tgid, keys[i].stack_id);
        if (!e->pcs) {
            int n = unwind_sample(s->sv->unwinder, (int)keys[i].tgid, smp, pcs, fps, PT_MAX_FRAMES, &truncated);
            if (n > 0) {
                e->pcs = malloc((size_t)n * sizeof(*pcs));
                memcpy(e->pcs, pcs, (size_t)n * sizeof(*pcs));
                e->npcs = n;
                if (e->tallied && e->truncated && !truncated)
                    s->tally_truncated--;
                e->truncated = truncated;
                name_java(s, (int)keys[i].tgid, smp, fps, e);
                rename_entry(s, e);    /* a frame-pointer naming may have come first */
            }
        }
        stack_maps_drop_sample(&s->kernel, &keys[i]);
        bool last = i + 1 == nkeys || keys[i + 1].tgid != keys[i].tgid;
        if (s->sv->tables && last)
            unwind_release(s->sv->unwinder, (int)keys[i].tgid);
        /* Past the deadline, at a process's end (its unwinder is let go). */
        if (deadline && last && i + 1 < nkeys && monotonic_ns() > deadline)
            return true;
    }
    retry_names(s);
    return nkeys == POLL_KEYS;   /* more may wait */
}

static void name_entry(struct stacks *s, struct entry *e)
{
    uint64_t fp[PT_MAX_FRAMES];
    const uint64_t *pcs = e->pcs;
    int n = e->npcs;

    if (!pcs) {
        memset(fp, 0, sizeof(fp));
        n = 0;
        if (stack_maps_fp(&s->kernel, e->stack_id, fp))
            while (n < PT_MAX_FRAMES && fp[n])
                n++;
        pcs = fp;
    }
    e->st.frames = calloc((size_t)n + 1, sizeof(struct pt_frame));
    for (int i = 0; i < n; i++) {
        if (e->pcs && ((e->java && e->java[i]) || (pcs[i] & PT_FRAME_METHOD))) {
            e->st.frames[i].name = strdup(e->java && e->java[i] ? e->java[i] : "[interpreted]");
            e->st.frames[i].module = strdup(PT_JAVA_MODULE);
        } else {
            symbolize_code(s->sv->maps, e->tgid, pcs[i], i > 0, &e->st.frames[i]);
        }
    }
    e->st.unwound = e->pcs != NULL;
    e->st.truncated = e->truncated;
    e->st.blind = e->blind;
    if (e->truncated)
        e->st.frames[n++].name = strdup(PT_TRUNCATED_FRAME);
    e->st.n = n;
    e->st.naming = ++s->namings;
    e->named = true;
}

/* The blocker's own entry for STACK_ID, its stack named (in its template
 * for a kernel-unwound stack) into *ST. */
static struct entry *resolve_entry(struct stacks *s, uint32_t slot, int tgid, int stack_id,
                                   const struct pt_stack **st)
{
    /* Through the blocker's own entry, whose reference keeps the template
     * (and the pointer returned) while the blocker lives. */
    struct entry *e = lookup(s, slot, tgid, stack_id), *named = e->tmpl ? e->tmpl : e;
    if (!named->named)
        name_entry(s, named);
    *st = &named->st;
    return e;
}

const struct pt_stack *stacks_resolve(struct stacks *s, uint32_t slot, int tgid, int stack_id)
{
    const struct pt_stack *st = &empty;
    if (stack_id >= 0)
        resolve_entry(s, slot, tgid, stack_id, &st);
    return st;
}

const char *stacks_top_frame(const struct pt_stack *st)
{
    int n = st->truncated ? st->n - 1 : st->n;
    for (int i = 0; i < n; i++)
        if (!frame_is_runtime(&st->frames[i]))
            return st->frames[i].name;
    /* A wait inside the JVM itself: its innermost JVM frame. */
    for (int i = 0; i < n; i++)
        if (!frame_is_c_runtime(&st->frames[i]))
            return st->frames[i].name;
    return st->n ? st->frames[0].name : "[unknown]";
}

/* FNV-1a over the names of the application's frames: runtime frames (libc,
 * the JVM, the JDK) change with inlining and compilation, not with who the
 * caller was. */
static uint64_t names_hash(const struct pt_stack *st)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < st->n; i++) {
        if (frame_is_runtime(&st->frames[i]))
            continue;
        for (const char *p = st->frames[i].name; p && *p; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
        h = (h ^ ';') * 0x100000001b3ull;
    }
    return h;
}

static int canonical(struct stacks *s, uint32_t slot, int tgid, int stack_id, const struct pt_stack *st)
{
    if (!st->n)
        return stack_id;
    uint64_t h = names_hash(st);
    unsigned b = (unsigned)((h ^ slot * 40503u ^ (unsigned)tgid) % CANON_BUCKETS);
    for (struct canon *c = s->canon[b]; c; c = c->next)
        if (c->hash == h && c->slot == slot && c->tgid == tgid)
            return c->stack_id;
    struct canon *c = calloc(1, sizeof(*c));
    if (!c)
        return stack_id;
    *c = (struct canon){s->canon[b], slot, tgid, stack_id, h};
    s->canon[b] = c;
    return stack_id;
}

int stacks_canonical(struct stacks *s, uint32_t slot, int tgid, int stack_id)
{
    if (stack_id < 0)
        return stack_id;
    /* Asked for every waker entry at every report: hashing the frames'
     * names each time was a good part of a report at 10 000 blockers. */
    const struct pt_stack *st;
    struct entry *e = resolve_entry(s, slot, tgid, stack_id, &st);
    if (!st->naming || e->canon_naming != st->naming) {
        e->canon_id = canonical(s, slot, tgid, stack_id, st);
        e->canon_naming = st->naming;
    }
    return e->canon_id;
}

void stacks_tally(struct stacks *s)
{
    /* Only keys are needed; the values land in the scratch dump too. */
    stack_maps_dump(&s->kernel, STACK_TIMES_WAITER, &s->tally_dump);
    const struct pt_stack_key *keys = s->tally_dump.keys;
    for (uint32_t i = 0; i < s->tally_dump.n; i++) {
        if (keys[i].stack_id < 0)
            continue;
        struct entry *e = lookup(s, keys[i].slot, (int)keys[i].tgid, keys[i].stack_id);
        if (e->tallied)
            continue;
        e->tallied = true;
        s->tally_n++;
        s->tally_truncated += e->truncated;
    }
}

void stacks_tallied(const struct stacks *s, uint64_t *stacks, uint64_t *truncated)
{
    *stacks = s->tally_n;
    *truncated = s->tally_truncated;
}

static void free_entry(struct entry *e)
{
    if (e->tmpl && !--e->tmpl->refs)
        e->tmpl->idle_ns = monotonic_ns();
    unname(e);
    for (int i = 0; e->java && i < e->npcs; i++)
        free(e->java[i]);
    free(e->java);
    free(e->pcs);
    free(e);
}

/* Frees the entries and call-path marks GONE picks (by slot and process),
 * and takes them off the retry list. */
static void forget(struct stacks *s, bool (*gone)(const void *ctx, uint32_t slot, int tgid), const void *ctx)
{
    int kept = 0;
    for (int i = 0; i < s->nretry; i++)
        if (!gone(ctx, s->retry[i]->slot, s->retry[i]->tgid))
            s->retry[kept++] = s->retry[i];
    s->nretry = kept;
    /* Blockers' entries first: they hold references to the templates. */
    for (int templates = 0; templates < 2; templates++)
        for (int h = 0; h < BUCKETS; h++)
            for (struct entry **p = &s->table[h], *e; (e = *p);) {
                if ((e->slot == KSTACK_TEMPLATE) == templates && gone(ctx, e->slot, e->tgid)) {
                    *p = e->next;
                    s->ncompact -= e->compact;
                    free_entry(e);
                } else {
                    p = &e->next;
                }
            }
    for (int h = 0; h < CANON_BUCKETS; h++)
        for (struct canon **p = &s->canon[h], *c; (c = *p);) {
            if (gone(ctx, c->slot, c->tgid)) {
                *p = c->next;
                free(c);
            } else {
                p = &c->next;
            }
        }
}

struct slot_filter {
    bool (*gone)(void *ctx, uint32_t slot);
    void *ctx;
};

static bool slot_gone(const void *ctx, uint32_t slot, int tgid)
{
    (void)tgid;
    const struct slot_filter *f = ctx;
    return slot != KSTACK_TEMPLATE && f->gone(f->ctx, slot);
}

void stacks_forget_slots(struct stacks *s, bool (*gone)(void *ctx, uint32_t slot), void *ctx)
{
    const struct slot_filter f = {gone, ctx};
    forget(s, slot_gone, &f);
}

static bool process_gone(const void *ctx, uint32_t slot, int tgid)
{
    (void)slot;
    return tgid == *(const int *)ctx;
}

void stacks_forget_process(struct stacks *s, int tgid)
{
    forget(s, process_gone, &tgid);
}

/* A process's template of a kernel-unwound stack that no blocker's entry
 * has named for TEMPLATE_IDLE_NS goes: a long-lived JVM's stacks change as
 * its JIT code does, and an hour's soak kept 4 000 such copies. Should it
 * be needed again, it is loaded from the kernel's table. When the kernel's
 * table has let it go, it is the only copy (a thread's cache may still
 * give its id: a cache hit does not refresh the kernel's LRU), so it stays
 * as its pcs and Java names, unnamed (named again if needed), up to
 * COMPACT_MAX such; past that the longest unused go, and one needed again
 * reads cut short and counts in stacks_lost. Looked at every
 * TRIM_TEMPLATES_NS. */
#define TEMPLATE_IDLE_NS 60000000000ULL
#define TRIM_TEMPLATES_NS 10000000000ULL
#define COMPACT_MAX 8192

static bool template_unused(const struct entry *e, uint64_t now)
{
    return e->slot == KSTACK_TEMPLATE && !e->refs && now - e->idle_ns > TEMPLATE_IDLE_NS;
}

/* Whether the kernel's table still holds stack ID. */
static bool kernel_holds(const struct stacks *s, int id)
{
    return stack_maps_ustack(&s->kernel, id, s->us);
}

/* What trimming does with unused template E: 0 keep, 1 compact, 2 free. */
static int trim_verdict(const struct stacks *s, const struct entry *e, uint64_t now, uint64_t oldest_kept)
{
    if (!template_unused(e, now))
        return 0;
    if (e->compact)
        return e->idle_ns < oldest_kept || kernel_holds(s, e->stack_id) ? 2 : 0;
    return !e->pcs || kernel_holds(s, e->stack_id) ? 2 : 1;
}

static int by_idle(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The idle time below which compact templates go to stay within COMPACT_MAX. */
static uint64_t compact_cutoff(const struct stacks *s)
{
    if (s->ncompact <= COMPACT_MAX)
        return 0;
    uint64_t *idle = malloc((size_t)s->ncompact * sizeof(*idle));
    if (!idle)
        return 0;
    int n = 0;
    for (int h = 0; h < BUCKETS; h++)
        for (const struct entry *e = s->table[h]; e && n < s->ncompact; e = e->next)
            if (e->compact)
                idle[n++] = e->idle_ns;
    qsort(idle, (size_t)n, sizeof(*idle), by_idle);
    uint64_t cut = n > COMPACT_MAX ? idle[n - COMPACT_MAX] : 0;
    free(idle);
    return cut;
}

void stacks_trim_templates(struct stacks *s, uint64_t now)
{
    if (now - s->trimmed_ns < TRIM_TEMPLATES_NS)
        return;
    s->trimmed_ns = now;
    uint64_t cut = compact_cutoff(s);
    struct entry *doomed = NULL;
    for (int h = 0; h < BUCKETS; h++)
        for (struct entry **p = &s->table[h], *e; (e = *p);) {
            int v = trim_verdict(s, e, now, cut);
            if (v == 2) {
                *p = e->next;
                e->next = doomed;
                doomed = e;
                e->doomed = true;
                continue;
            }
            if (v == 1) {
                unname(e);
                e->compact = true;
                s->ncompact++;
            }
            p = &e->next;
        }
    int kept = 0;
    for (int i = 0; i < s->nretry; i++)
        if (!s->retry[i]->doomed)
            s->retry[kept++] = s->retry[i];
    s->nretry = kept;
    for (struct entry *e = doomed, *next; e; e = next) {
        next = e->next;
        s->ncompact -= e->compact;
        free_entry(e);
        s->templates_trimmed++;
    }
}

uint64_t stacks_templates_trimmed(const struct stacks *s)
{
    return s->templates_trimmed;
}

int stacks_templates_compact(const struct stacks *s)
{
    return s->ncompact;
}

int stacks_dead_processes(const struct stacks *s, int *tgids, int max)
{
    /* Each process looked at once: an open-addressed set of those seen. */
    enum { SEEN = 4096 };
    int seen[SEEN] = {0}, nseen = 0, n = 0;
    for (int h = 0; h < BUCKETS && n < max && nseen < SEEN / 2; h++)
        for (const struct entry *e = s->table[h]; e && n < max && nseen < SEEN / 2; e = e->next) {
            if (e->tgid <= 0)
                continue;
            unsigned k = (unsigned)e->tgid * 2654435761u % SEEN;
            while (seen[k] && seen[k] != e->tgid)
                k = (k + 1) % SEEN;
            if (seen[k])
                continue;
            seen[k] = e->tgid;
            nseen++;
            if (kill(e->tgid, 0) && errno == ESRCH)
                tgids[n++] = e->tgid;
        }
    return n;
}

void stacks_free(struct stacks *s)
{
    if (!s)
        return;
    for (int h = 0; h < BUCKETS; h++) {
        struct entry *e = s->table[h];
        while (e) {
            struct entry *next = e->next;
            free_entry(e);
            e = next;
        }
    }
    free(s->retry);
    map_dump_free(&s->tally_dump);
    for (int h = 0; h < CANON_BUCKETS; h++)
        for (struct canon *c = s->canon[h], *next; c; c = next) {
            next = c->next;
            free(c);
        }
    free(s->us);
    free(s->smp);
    free(s);
}
