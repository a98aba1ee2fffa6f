/* Naming a cached stack's frames: native ones from ELF symbols, Java ones
 * by the JVM tracker's namer, again when the JVM or its perf map learns
 * more; and stacks that read alike made one (stacks_canonical). */
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
#include "stacks_parts.h"

/* A stack with no frames: an entry unnamed, or not yet named. */
static const struct pt_stack empty;

static bool java_name(struct stacks *s, int pid, uint64_t pc, uint64_t fp, const struct pt_sample *smp, char *out,
                      size_t len)
{
    return s->java_namer.name && s->java_namer.name(s->java_namer.ctx, pid, pc, fp, smp, out, len);
}

void stacks_unname(struct entry *e)
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
void stacks_name_java(struct stacks *s, int tgid, const struct pt_sample *smp, const uint64_t *fps, struct entry *e)
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

/* Names a named entry again, in place: the collector keeps pointers to
 * entries' stacks (a blocker's first stack), which must never read empty. */
void stacks_rename_entry(struct stacks *s, struct entry *e)
{
    if (!e->named)
        return;
    struct pt_stack old = e->st;
    e->st = empty;
    e->named = false;
    stacks_name_entry(s, e);
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
void stacks_retry_names(struct stacks *s)
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
                stacks_rename_entry(s, e);
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

void stacks_name_entry(struct stacks *s, struct entry *e)
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
    unsigned b = canon_bucket(h, slot, tgid);
    for (struct canon *c = s->canon[b]; c; c = c->next)
        if (c->hash == h && c->slot == slot && c->tgid == tgid)
            return c->stack_id;
    struct canon *c = calloc(1, sizeof(*c));
    if (!c)
        return stack_id;
    *c = (struct canon){s->canon[b], s->canon_by_slot[slot % SLOT_BUCKETS], slot, tgid, stack_id, h};
    s->canon[b] = c;
    s->canon_by_slot[slot % SLOT_BUCKETS] = c;
    return stack_id;
}

int stacks_canonical(struct stacks *s, uint32_t slot, int tgid, int stack_id)
{
    if (stack_id < 0)
        return stack_id;
    /* Asked for every waker entry at every report: hashing the frames'
     * names each time was a good part of a report at 10 000 blockers. */
    const struct pt_stack *st;
    struct entry *e = stacks_resolve_entry(s, slot, tgid, stack_id, &st);
    if (!st->naming || e->canon_naming != st->naming) {
        e->canon_id = canonical(s, slot, tgid, stack_id, st);
        e->canon_naming = st->naming;
    }
    return e->canon_id;
}
