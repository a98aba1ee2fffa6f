/* Wait chains for a report (metrics.md, "Wait chains"): the kernel's
 * chain_time (bpf/chains.bpf.h) read whole, each entry's links named
 * (process, thread name, and the blocker's kind, class and site), the
 * entries with the same names and end added up, ranked by time; an
 * interval report takes what each entry gained since the last one. */
#include "collect_chains.h"

#include <stdlib.h>
#include <string.h>

#include "chain_map.h"
#include "collect_parts.h"
#include "oom.h"
#include "procmaps.h"
#include "procstatus.h"
#include "services.h"
#include "str_hash.h"

static const char *const end_names[PT_CHAIN_END_COUNT] = {"running", "runnable", "sleeping", "io", "cycle",
                                                          "unknown"};

static int key_cmp(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(struct pt_chain_key));
}

/* What entry K had at the last interval report (0 before the first). */
static const struct pt_chain_val *before(const struct chain_memory *m, const struct pt_chain_key *k)
{
    const struct pt_chain_key *keys = m->keys;
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int d = key_cmp(&keys[mid], k);
        if (!d)
            return &m->vals[mid];
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Keeps the table just read as the next interval's start, sorted by key. */
static void remember(struct chain_memory *m, const struct map_dump *d)
{
    size_t n = d->n;
    struct { struct pt_chain_key k; struct pt_chain_val v; } *e = calloc(n ? n : 1, sizeof(*e));
    struct pt_chain_key *keys = malloc((n ? n : 1) * sizeof(*keys));
    struct pt_chain_val *vals = malloc((n ? n : 1) * sizeof(*vals));
    if (!e || !keys || !vals)
        out_of_memory("the wait chains");
    for (size_t i = 0; i < n; i++) {
        memcpy(&e[i].k, (const char *)d->keys + i * sizeof(struct pt_chain_key), sizeof(e[i].k));
        memcpy(&e[i].v, (const char *)d->vals + i * sizeof(struct pt_chain_val), sizeof(e[i].v));
    }
    qsort(e, n, sizeof(*e), key_cmp);
    for (size_t i = 0; i < n; i++) {
        keys[i] = e[i].k;
        vals[i] = e[i].v;
    }
    free(e);
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->n = n;
}

/* Thread TID's name (of process PID), read once a report: as the kernel
 * read it in its chain, else from /proc, else as last read (a small
 * table: a miss costs a read; recycling names thousands of chains). */
static void thread_name(struct collector *c, int pid, int tid, char out[PT_MODEL_COMM])
{
    struct chain_memory *m = &c->chains;
    struct chain_thread *t = &m->threads[(uint32_t)tid % CHAIN_THREADS];
    if (t->tid != tid || t->read_gen != m->gen) {
        char name[PT_MODEL_COMM];
        if (chain_map_comm(c->t, (uint32_t)tid, name) || procstatus_thread_comm(pid, tid, name, sizeof(name)) == 0) {
            memcpy(t->name, name, sizeof(name));
            t->read_gen = m->gen;
            t->tid = tid;
        } else if (t->tid != tid) {
            snprintf(out, PT_MODEL_COMM, "%s", "");
            return;
        }
    }
    memcpy(out, t->name, PT_MODEL_COMM);
}

/* Whether the kernel's holder of a wait on blocker B (slot SLOT) counts:
 * a glibc mutex's is its owner (__owner), never its waker; so is a
 * java.util.concurrent lock's (exclusiveOwnerThread); a monitor's is its
 * owner, or, while that is a stack lock, the thread that lets it go to
 * the waiter; on anything else the word read as an owner is none, and
 * the thread that woke the waiter there the last two times (VIA_WAKER)
 * stands in. */
static bool holder_counts(const struct collector *c, uint32_t slot, const struct blocker *b, bool via_waker)
{
    const struct pt_slot *s = &c->t->slots[slot];
    if ((s->key.kind & 0xff) == PT_KIND_JVM_MONITOR)
        return true;
    if ((s->key.kind & 0xff) == PT_KIND_FUTEX && b->cls.cls && strcmp(b->cls.cls, "pthread_mutex") == 0)
        return !via_waker;
    if ((s->key.kind & 0xff) != PT_KIND_FUTEX && !b->cls.wait)
        return b->owner_recorded && !via_waker;
    return via_waker;
}

/* The blocker link L waits on, slot SLOT1 (+ 1; 0: none): false when it
 * is gone (its slot let go since). */
static bool name_blocker(struct collector *c, uint32_t slot1, struct pt_model_chain_link *l, struct blocker **bp)
{
    if (!slot1)
        return false;
    struct blocker *b = collector_blocker(c, slot1 - 1);
    if (!b)
        return false;
    const struct pt_slot *s = &c->t->slots[slot1 - 1];
    l->kind = pt_kind_names[s->key.kind & 0xff];
    l->cls = b->cls.cls ? b->cls.cls : "futex";
    l->name = b->name;
    l->id = slot_blocker_id(s);
    l->top_frame = blocker_top_frame(b);
    *bp = b;
    return true;
}

/* A frame of a system call's way in, or of the VFS: not what holds an
 * I/O wait up. */
static bool entry_frame(const char *name)
{
    static const char *const prefixes[] = {"entry_", "do_syscall", "x64_sys_call", "__x64_sys_", "__ia32_sys_",
                                           "__do_sys_", "__se_sys_", "ksys_", "vfs_", "do_", "asm_exc_", "exc_",
                                           "ret_from_fork", "kthread", "syscall_"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* The frame where kernel stack ID holds its thread in I/O: from the
 * outermost in, the first past the system call's entry and the VFS
 * (ext4_sync_file for an fsync), NULL when unknown. */
static const char *io_frame(struct collector *c, uint32_t id)
{
    uint64_t ips[PT_CHAIN_KFRAMES];
    if (!chain_map_kstack(c->t, id, ips))
        return NULL;
    kallsyms_load(&c->chains.ksyms);
    int n = 0;
    while (n < PT_CHAIN_KFRAMES && ips[n])
        n++;
    for (int i = n - 1; i >= 0; i--) {
        const char *name = kallsyms_name(&c->chains.ksyms, ips[i]);
        if (name && !entry_frame(name))
            return name;
    }
    return NULL;
}

/* Entry K named into OUT: false when its first wait has no holder that
 * counts (its blocker records none, or is gone). A cycle that is the whole
 * chain starts at its lowest (pid, tid), whoever waited. */
static bool name_chain(struct collector *c, const struct pt_chain_key *k, struct pt_model_chain *out)
{
    uint32_t depth = k->depth < PT_CHAIN_DEPTH ? k->depth : PT_CHAIN_DEPTH, end = k->end, first = 0;
    bool cycle = end == PT_CHAIN_CYCLE && k->cycle_to == 0;
    for (uint32_t i = 1; cycle && i <= depth; i++) {
        if (k->tgid[i] < k->tgid[first] || (k->tgid[i] == k->tgid[first] && k->tid[i] < k->tid[first]))
            first = i;
    }
    out->nlinks = 0;
    for (uint32_t n = 0; n <= depth; n++) {
        uint32_t i = cycle ? (first + n) % (depth + 1) : n;
        struct pt_model_chain_link *l = &out->links[out->nlinks++];
        l->pid = (int)k->tgid[i];
        snprintf(l->comm, sizeof(l->comm), "%s", procmaps_get(c->sv->maps, l->pid)->comm);
        thread_name(c, l->pid, (int)k->tid[i], l->thread);
        bool waits = i < depth || cycle || (end == PT_CHAIN_UNKNOWN && k->slot[i]);
        struct blocker *b = NULL;
        if (!waits)
            continue;
        bool named = name_blocker(c, k->slot[i], l, &b);
        /* A chain starts at a wait that is not idle housekeeping. */
        if (!n && (!named || blocker_idle(c, b, &c->t->slots[k->slot[i] - 1])))
            return false;
        bool counts = named && (i < depth || cycle) && holder_counts(c, k->slot[i] - 1, b, (k->via_waker >> i) & 1);
        if (!counts) {
            if (!n)
                return false;
            /* The last link: its wait has no holder parktrace can name
             * (past here, the word read as an owner is none), so it waits
             * on an event (sleeping: a JVM's Thread.sleep, say), or on a
             * lock whose owner is not known. */
            end = named && b->cls.wait ? PT_CHAIN_SLEEPING : PT_CHAIN_UNKNOWN;
            l->kind = l->cls = l->name = l->top_frame = NULL;
            l->id = 0;
            cycle = false;
            break;
        }
    }
    out->cycle = cycle;
    out->end = end_names[end < PT_CHAIN_END_COUNT ? end : PT_CHAIN_UNKNOWN];
    out->end_frame = end == PT_CHAIN_IO ? io_frame(c, k->end_kstack) : NULL;
    return true;
}

/* What groups a chain: its links' names and its end. */
static uint64_t chain_hash(const struct pt_model_chain *ch)
{
    uint64_t h = str_hash_from(str_hash(ch->end), ch->end_frame);
    for (int i = 0; i < ch->nlinks; i++) {
        const struct pt_model_chain_link *l = &ch->links[i];
        char pid[16];
        snprintf(pid, sizeof(pid), "%d|", l->pid);
        h = str_hash_from(h, pid);
        h = str_hash_from(str_hash_from(h, l->comm), "|");
        h = str_hash_from(str_hash_from(h, l->thread), "|");
        h = str_hash_from(str_hash_from(h, l->kind), "|");
        h = str_hash_from(str_hash_from(h, l->cls), "|");
        h = str_hash_from(str_hash_from(h, l->top_frame), "|");
    }
    return h;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_chain(const struct pt_model_chain *a, const struct pt_model_chain *b)
{
    if (a->nlinks != b->nlinks || strcmp(a->end, b->end) != 0 || !same_str(a->end_frame, b->end_frame))
        return false;
    for (int i = 0; i < a->nlinks; i++) {
        const struct pt_model_chain_link *x = &a->links[i], *y = &b->links[i];
        if (x->pid != y->pid || strcmp(x->comm, y->comm) || strcmp(x->thread, y->thread) ||
            !same_str(x->kind, y->kind) || !same_str(x->cls, y->cls) || !same_str(x->top_frame, y->top_frame))
            return false;
    }
    return true;
}

static int by_time(const void *a, const void *b)
{
    const struct pt_model_chain *x = a, *y = b;
    return x->time_ns < y->time_ns ? 1 : x->time_ns > y->time_ns ? -1 : 0;
}

/* Adds entry CH (time and waits set) to its group in G (N groups, hashed
 * in SLOTS, NSLOTS a power of two above N's bound). */
static void group_add(struct pt_model_chain *g, int *n, int *slots, uint32_t nslots, const struct pt_model_chain *ch)
{
    uint64_t h = chain_hash(ch);
    for (uint32_t j = (uint32_t)h & (nslots - 1);; j = (j + 1) & (nslots - 1)) {
        if (slots[j] < 0) {
            slots[j] = *n;
            g[(*n)++] = *ch;
            return;
        }
        if (same_chain(&g[slots[j]], ch)) {
            g[slots[j]].time_ns += ch->time_ns;
            g[slots[j]].waits += ch->waits;
            return;
        }
    }
}

/* A copy of S (NULL stays NULL) in BUF. */
static const char *keep_str(char *buf, size_t size, const char *s)
{
    if (!s)
        return NULL;
    snprintf(buf, size, "%s", s);
    return buf;
}

/* CH, its strings copied, added to the retired chains of kind W (0: the
 * window's, 1: the run's). */
static void index_put(struct chain_memory *m, int w, int at)
{
    uint32_t j = (uint32_t)m->retired[w][at].hash & (CHAIN_RETIRED_INDEX - 1);
    while (m->index[w][j])
        j = (j + 1) & (CHAIN_RETIRED_INDEX - 1);
    m->index[w][j] = at + 1;
}

static void retire_one(struct chain_memory *m, int w, const struct pt_model_chain *ch)
{
    uint64_t h = chain_hash(ch);
    if (!m->index[w]) {
        m->index[w] = calloc(CHAIN_RETIRED_INDEX, sizeof(*m->index[w]));
        m->retired[w] = calloc(CHAIN_RETIRED_MAX, sizeof(*m->retired[w]));
        if (!m->index[w] || !m->retired[w])
            out_of_memory("the wait chains");
    }
    for (uint32_t j = (uint32_t)h & (CHAIN_RETIRED_INDEX - 1); m->index[w][j]; j = (j + 1) & (CHAIN_RETIRED_INDEX - 1)) {
        struct chain_retired *r = &m->retired[w][m->index[w][j] - 1];
        if (r->hash == h && same_chain(&r->ch, ch)) {
            r->ch.time_ns += ch->time_ns;
            r->ch.waits += ch->waits;
            return;
        }
    }
    int at = m->nretired[w];
    if (at == CHAIN_RETIRED_MAX) {
        at = 0;
        for (int i = 1; i < m->nretired[w]; i++)
            if (m->retired[w][i].ch.time_ns < m->retired[w][at].ch.time_ns)
                at = i;
        if (m->retired[w][at].ch.time_ns >= ch->time_ns)
            return;
    } else {
        m->nretired[w]++;
    }
    struct chain_retired *r = &m->retired[w][at];
    r->ch = *ch;
    r->hash = h;
    for (int i = 0; i < ch->nlinks; i++) {
        struct pt_model_chain_link *l = &r->ch.links[i];
        l->kind = keep_str(r->text[i][0], sizeof(r->text[i][0]), l->kind);
        l->cls = keep_str(r->text[i][1], sizeof(r->text[i][1]), l->cls);
        l->name = keep_str(r->text[i][2], sizeof(r->text[i][2]), l->name);
        l->top_frame = keep_str(r->text[i][3], sizeof(r->text[i][3]), l->top_frame);
    }
    if (at < m->nretired[w] - 1 || m->nretired[w] == CHAIN_RETIRED_MAX) {
        /* One let go for it: the index is built again. */
        memset(m->index[w], 0, CHAIN_RETIRED_INDEX * sizeof(*m->index[w]));
        for (int i = 0; i < m->nretired[w]; i++)
            index_put(m, w, i);
    } else {
        index_put(m, w, at);
    }
}

/* Whether entry K waits on a slot being let go. */
static bool chain_retiring(const struct collector *c, const struct pt_chain_key *k)
{
    for (int i = 0; i <= PT_CHAIN_DEPTH; i++) {
        uint32_t s = k->slot[i];
        if (s && s - 1 < c->t->nslots && c->retiring[s - 1] == 2)
            return true;
    }
    return false;
}

void collector_retire_chains(struct collector *c)
{
    struct chain_memory *m = &c->chains;
    if (c->o->chains <= 0 || chain_map_dump(c->t, &m->now) != 0)
        return;
    uint32_t gone = 0;
    for (uint32_t i = 0; i < m->now.n; i++) {
        const struct pt_chain_key *k = (const struct pt_chain_key *)m->now.keys + i;
        const struct pt_chain_val *v = (const struct pt_chain_val *)m->now.vals + i;
        if (!chain_retiring(c, k))
            continue;
        const struct pt_chain_val *was = before(m, k);
        struct pt_model_chain ch = {.time_ns = v->ns, .waits = v->waits};
        if (name_chain(c, k, &ch)) {
            retire_one(m, 1, &ch);
            ch.time_ns -= was ? was->ns : 0;
            ch.waits -= was ? was->waits : 0;
            if (ch.time_ns)
                retire_one(m, 0, &ch);
        }
        if (gone != i)
            memcpy((struct pt_chain_key *)m->now.keys + gone, k, sizeof(*k));
        gone++;
    }
    chain_map_delete(c->t, m->now.keys, gone);
}

/* Each slot's heaviest chain end over the run, from the table just read. */
static void note_slot_ends(struct chain_memory *m, uint32_t nslots)
{
    if (m->nslot_end < nslots) {
        uint8_t *e = realloc(m->slot_end, nslots);
        uint64_t *ns = realloc(m->slot_end_ns, nslots * sizeof(*ns));
        if (!e || !ns)
            out_of_memory("the wait chains");
        m->slot_end = e;
        m->slot_end_ns = ns;
        m->nslot_end = nslots;
    }
    memset(m->slot_end, PT_CHAIN_END_COUNT, m->nslot_end);
    memset(m->slot_end_ns, 0, m->nslot_end * sizeof(*m->slot_end_ns));
    for (uint32_t i = 0; i < m->now.n; i++) {
        const struct pt_chain_key *k = (const struct pt_chain_key *)m->now.keys + i;
        const struct pt_chain_val *v = (const struct pt_chain_val *)m->now.vals + i;
        uint32_t s = k->slot[0] - 1;
        if (k->slot[0] && s < m->nslot_end && v->ns > m->slot_end_ns[s] && k->end < PT_CHAIN_END_COUNT) {
            m->slot_end_ns[s] = v->ns;
            m->slot_end[s] = (uint8_t)k->end;
        }
    }
}

const char *collector_chain_end(const struct collector *c, uint32_t slot)
{
    const struct chain_memory *m = &c->chains;
    if (slot >= m->nslot_end || m->slot_end[slot] >= PT_CHAIN_END_COUNT)
        return NULL;
    return end_names[m->slot_end[slot]];
}

void collector_model_chains(struct collector *c, struct pt_model *r, bool interval)
{
    struct chain_memory *m = &c->chains;
    if (c->o->chains <= 0 || chain_map_dump(c->t, &m->now) != 0)
        return;
    m->gen++;
    note_slot_ends(m, c->t->nslots);
    uint32_t n = m->now.n, nslots = 16, most = n + (uint32_t)m->nretired[interval ? 0 : 1];
    while (nslots < 2 * most)
        nslots *= 2;
    struct pt_model_chain *g = malloc((most ? most : 1) * sizeof(*g));
    int *slots = malloc(nslots * sizeof(*slots)), ng = 0;
    if (!g || !slots)
        out_of_memory("the wait chains");
    memset(slots, -1, nslots * sizeof(*slots));
    for (uint32_t i = 0; i < n; i++) {
        const struct pt_chain_key *k = (const struct pt_chain_key *)m->now.keys + i;
        const struct pt_chain_val *v = (const struct pt_chain_val *)m->now.vals + i;
        const struct pt_chain_val *was = interval ? before(m, k) : NULL;
        struct pt_model_chain ch = {.time_ns = v->ns - (was ? was->ns : 0), .waits = v->waits - (was ? was->waits : 0)};
        if (ch.time_ns && name_chain(c, k, &ch))
            group_add(g, &ng, slots, nslots, &ch);
    }
    /* The recycled blockers' chains, of the window or of the run. */
    int w = interval ? 0 : 1;
    for (int i = 0; i < m->nretired[w]; i++)
        group_add(g, &ng, slots, nslots, &m->retired[w][i].ch);
    qsort(g, (size_t)ng, sizeof(*g), by_time);
    r->has_chains = true;
    for (int i = 0; i < ng && i < c->o->chains; i++)
        *model_add_chain(r) = g[i];
    free(g);
    free(slots);
    if (interval) {
        remember(m, &m->now);
        m->nretired[0] = 0;
        if (m->index[0])
            memset(m->index[0], 0, CHAIN_RETIRED_INDEX * sizeof(*m->index[0]));
    }
}

void collector_chains_free(struct collector *c)
{
    map_dump_free(&c->chains.now);
    free(c->chains.keys);
    free(c->chains.vals);
    kallsyms_free(&c->chains.ksyms);
    free(c->chains.slot_end);
    free(c->chains.slot_end_ns);
    free(c->chains.index[0]);
    free(c->chains.index[1]);
    free(c->chains.retired[0]);
    free(c->chains.retired[1]);
}
