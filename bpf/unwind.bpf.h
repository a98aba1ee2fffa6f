/* The kernel-side stack walker: user stacks unwound from the DWARF
 * call-frame rows user space builds per binary (user/unwind/unwind_rows.c), so
 * stacks pass through code without frame pointers (Debian's libc, -O2
 * programs) and every call path gets its own stack id. Included by
 * stacks.bpf.h; runs only when a stack is not in the thread's cache.
 *
 * Owns: the maps unwind_bins (one table per binary), unwind_procs (tgid ->
 * mappings with tables), unwind_asked, ustacks (stack id -> unwound stack),
 * ustack_scratch, check_span, stack_window, row_cache (and unwind_gen);
 * stack_word, umap_find, urow_find,
 * fp_step, unwind_step, ustack_store,
 * unwind_user, ustack_cache_holds. Java frames: unwind_java.bpf.h.
 *
 * Shared: unwind_procs and unwind_asked with lifetimes.bpf.h (cleared at exec
 * and exit); sample_ready (stacks.bpf.h) to ask user space for tables. */
#ifndef PT_UNWIND_BPF_H
#define PT_UNWIND_BPF_H

/* One binary's table: head, page index, rows (bpf/parktrace.h). Tables
 * differ in size, hence BPF_F_INNER_MAP; user space writes them through
 * mmap. */
struct unwind_table {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
    __uint(max_entries, PT_UNWIND_BINS);
    __type(key, __u32);
    __array(values, struct unwind_table);
} unwind_bins SEC(".maps");

/* tgid -> its mappings with tables; made by user space on request. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, struct pt_uproc);
} unwind_procs SEC(".maps");

/* Processes already asked for, so a process waiting before user space has
 * its tables asks once. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 8192);
    __type(key, __u32);
    __type(value, __u8);
} unwind_asked SEC(".maps");

/* Stack id -> the unwound stack. User space copies each new stack as it is
 * told of it (PT_READY_STACK), so this is a cache of recent walks: when it
 * is full the least recently used stacks go, and a stack walked again is
 * stored again under the same id (the id is its hash). */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 8192);
    __type(key, __u32);
    __type(value, struct pt_ustack);
} ustacks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct pt_ustack);
} ustack_scratch SEC(".maps");

/* The stack span a cache check copies at once (ustack_cache_holds). */
#define PT_CHECK_SPAN 2048
struct check_span_buf {
    __u8 b[PT_CHECK_SPAN + 8];    /* a word at any masked offset fits */
};
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct check_span_buf);
} check_span SEC(".maps");

/* Why stacks were dropped (--self-stats): the kernel-unwound stack table
 * refused one (its last error; 1: both of its ids held other stacks), or
 * the frame-pointer stack map did (bpf_get_stackid's last error). */
__u64 drop_stacks_table = 0, drop_stacks_fp = 0;
__s64 drop_stacks_table_err = 0, drop_stacks_fp_err = 0;

/* A window on the walked thread's stack: its 1 KiB chunks from the walk's
 * first sp up are copied as the walk first reads a word in each, and later
 * words come from the copy. A read of user memory is a helper call of some
 * 200 ns here (the CPUs' safe-return mitigation), and a frame reads two
 * words: H2's walks of 24 frames took 20 us. GEN tells a walk its window
 * from one a program that interrupted it (a task work's walk) reset. */
#define PT_WIN_SHIFT 10
#define PT_WIN_CHUNKS 16
#define PT_WIN_BYTES (PT_WIN_CHUNKS << PT_WIN_SHIFT)
struct stack_window {
    __u64 base;             /* the first chunk's address */
    __u32 loaded;           /* bit k: chunk k copied */
    __u32 gen;
    __u8 buf[PT_WIN_BYTES + 8];
};
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct stack_window);
} stack_window SEC(".maps");

/* Walk state, on the caller's stack for bpf_loop's callback. */
struct uwalk {
    __u64 ip, sp, bp;
    __u64 hash;
    struct pt_uproc *proc;
    struct pt_ustack *st;
    struct pt_stack_cache *cache;
    struct pt_jvm_layout *jvm;     /* the process's JVM, once its code is met */
    __u32 java_frames;             /* Java frames walked so far */
    __u32 tid;
    struct stack_window *win;      /* NULL: every word read from the stack itself */
    __u32 win_gen;
};

/* The word at ADDR of a walked thread's stack into *OUT: 0, or the read's
 * error. Through WIN, the walk's window (of count GEN), when it covers
 * ADDR. A global function: checked once, not at each of the walk's reads
 * (inlined, they tripled the verifier's work at every start). */
__noinline int window_word(struct stack_window *win, __u32 gen, __u64 addr, __u64 *out)
{
    if (!out)
        return -1;
    if (win && win->gen == gen && !(addr & 7) && addr >= win->base && addr - win->base < PT_WIN_BYTES) {
        __u64 off = addr - win->base;
        __u32 k = (__u32)(off >> PT_WIN_SHIFT) & (PT_WIN_CHUNKS - 1);
        if (win->loaded & (1u << k)) {
            *out = *(__u64 *)(win->buf + (off & (PT_WIN_BYTES - 1)));
            return 0;
        }
        __u32 at = k << PT_WIN_SHIFT;
        if (!bpf_probe_read_user(win->buf + at, 1u << PT_WIN_SHIFT, (void *)(win->base + at))) {
            win->loaded |= 1u << k;
            *out = *(__u64 *)(win->buf + (off & (PT_WIN_BYTES - 1)));
            return 0;
        }
        /* A chunk past the stack's last mapped page: the word alone. */
    }
    return bpf_probe_read_user(out, sizeof(*out), (void *)addr);
}

static __always_inline long stack_word(struct uwalk *w, __u64 addr, __u64 *out)
{
    return window_word(w->win, w->win_gen, addr, out);
}

#define UNWIND_MAP_STEPS 7     /* log2(PT_UNWIND_MAPS) + 1 */
#define UNWIND_ROW_STEPS 13    /* a 4 KiB page holds at most 4096 rows */
#define UNWIND_FP_SPAN (8u << 20)

/* The index of the mapping of P that holds PC, or -1. Global: checked once. */
__noinline int umap_find(const struct pt_uproc *p, __u64 pc)
{
    if (!p)
        return -1;
    __u32 lo = 0, hi = p->n < PT_UNWIND_MAPS ? p->n : PT_UNWIND_MAPS;
    /* Branch-free halving (above): the verifier walked all 2^7 paths,
     * 20 000 instructions at each start, twice. */
    for (int i = 0; i < UNWIND_MAP_STEPS && lo < hi; i++) {
        __u32 mid = (lo + hi) / 2;
        if (mid >= PT_UNWIND_MAPS)
            return -1;
        __u32 right = 1 - above(p->m[mid].start, pc);
        lo += right * (mid + 1 - lo);
        hi -= (1 - right) * (hi - mid);
    }
    if (lo == 0 || lo > PT_UNWIND_MAPS || pc >= p->m[lo - 1].end)
        return -1;
    return lo - 1;
}

/* Bumped by user space at each change of the tables (unwind_bins): the
 * row cache holds under one count only. */
__u32 unwind_gen = 1;

/* The rows found last on this CPU, by (binary, pc): the search below is
 * some 15 lookups in a binary's table, each a helper call (its map is
 * one of many, so none is inlined), 370 ns a frame on H2; the walks that
 * miss a thread's stack cache mostly take the same paths again. */
#define PT_ROW_CACHE 512
struct row_cached {
    __u32 bin, pc, gen, pad;
    struct pt_urow row;
};
struct row_cache {
    struct row_cached e[PT_ROW_CACHE];
};
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct row_cache);
} row_cache SEC(".maps");

/* The row in force at file address PC of binary BIN into *OUT, found in
 * its table (kind PT_CFA_NONE when no row covers it). */
static __always_inline void urow_search(__u32 bin, __u32 pc, struct pt_urow *out)
{
    out->kind = PT_CFA_NONE;
    void *t = bpf_map_lookup_elem(&unwind_bins, &bin);
    if (!t)
        return;
    __u32 k = 0;
    struct pt_utable_head *h = bpf_map_lookup_elem(t, &k);
    if (!h)
        return;
    __u32 page = pc >> PT_UNWIND_PAGE_SHIFT, first = h->first_page, npages = h->npages;
    if (page < first || page - first >= npages)
        return;
    k = 1 + page - first;
    struct pt_upage *pg = bpf_map_lookup_elem(t, &k);
    if (!pg)
        return;
    __u32 lo = pg->lo, hi = pg->hi, base = 1 + npages;
    /* Last row with row.pc <= pc, in [lo, hi]. */
    for (int i = 0; i < UNWIND_ROW_STEPS && lo < hi; i++) {
        __u32 mid = (lo + hi + 1) / 2;
        k = base + mid;
        struct pt_urow *r = bpf_map_lookup_elem(t, &k);
        if (!r)
            return;
        __u32 right = 1 - above(r->pc, pc);     /* branch-free, as in umap_find */
        lo += right * (mid - lo);
        hi -= (1 - right) * (hi - mid + 1);
    }
    k = base + lo;
    struct pt_urow *r = bpf_map_lookup_elem(t, &k);
    if (r && r->pc <= pc)
        *out = *r;
}

/* The row in force at file address PC of binary BIN (kind PT_CFA_NONE when
 * no row covers it) into *OUT: from this CPU's row cache, else searched
 * (and cached under the tables' count as read before the search). A
 * global function: the verifier checks its binary search once, not once
 * per caller and path. */
__noinline int urow_find(__u32 bin, __u32 pc, struct pt_urow *out)
{
    if (!out)
        return 0;
    __u32 zero = 0, gen = *(volatile __u32 *)&unwind_gen;
    struct row_cache *rc = bpf_map_lookup_elem(&row_cache, &zero);
    struct row_cached *c = NULL;
    if (rc) {
        __u32 i = (bin * 0x9E3779B1u) ^ pc ^ (pc >> 11);
        c = &rc->e[i & (PT_ROW_CACHE - 1)];
        if (c->gen == gen && c->bin == bin && c->pc == pc) {
            *out = c->row;
            return 0;
        }
    }
    urow_search(bin, pc, out);
    if (c) {
        c->bin = bin;
        c->pc = pc;
        c->row = *out;
        c->gen = gen;
    }
    return 0;
}

/* One frame step by frame pointer, for code without tables (another
 * runtime's JIT code, HotSpot's stubs and frames that keep rbp): rbp must
 * point a little above sp. */
/* Remembers a word the walk read (VAL at ADDR: frame NR's return address,
 * or an interpreted frame's Method*) for the thread's stack cache, which
 * reads it again to tell a different caller at the same ip and sp: native
 * frames 1 to 6, 8 and 12 and the first six Java frames (JAVA), where a
 * lock's library code meets its callers. With checks at fixed depths only,
 * a Java thread taking two paths into one lock got the other path's stack
 * a third of the time: shares 10 points off the workload's; with native
 * frames 2, 4, 8 and 12 only, C threads taking two paths that differ at
 * frame 3 got 2.7-5.8 points off with every stack walked (0.0-0.5 now). */
static __always_inline void remember_check(struct uwalk *w, __u32 nr, __u64 addr, __u64 val, bool java)
{
    struct pt_stack_cache *c = w->cache;
    if (!c || !(java ? w->java_frames <= 6 : ((nr >= 1 && nr <= 6) || nr == 8 || nr == 12)))
        return;
    /* Counted in the cache (map memory), not in the walk's state: a count
     * the verifier tracks exactly multiplies the states it explores. */
    __u32 j = c->nchecks;
    if (j < PT_CACHE_CHECKS) {
        c->chk_addr[j] = addr;
        c->chk_val[j] = val;
        c->nchecks = j + 1;
    }
}

static __always_inline bool fp_step(struct uwalk *w)
{
    __u64 fr[2];
    if (w->bp <= w->sp || w->bp - w->sp > UNWIND_FP_SPAN || stack_word(w, w->bp, &fr[0]) ||
        stack_word(w, w->bp + 8, &fr[1]))
        return false;
    w->sp = w->bp + 16;
    w->bp = fr[0];
    w->ip = fr[1];
    return true;
}

#include "unwind_java.bpf.h"

/* Records the current frame and moves to its caller. Returns 1 to stop. */
static long unwind_step(__u32 i, void *ctx)
{
    struct uwalk *w = ctx;
    struct pt_ustack *st = w->st;
    if (!st || w->ip == 0)
        return 1;
    __u32 nr = st->nr;
    if (nr >= PT_MAX_FRAMES) {
        st->flags |= PT_USTACK_TRUNCATED;
        return 1;
    }
    st->ip[nr] = w->ip;
    st->nr = nr + 1;
    w->hash = (w->hash ^ w->ip) * 0x9E3779B97F4A7C15ull;

    /* A return address points past its call; look up the call itself. */
    __u64 pc = nr ? w->ip - 1 : w->ip;
    int mi = umap_find(w->proc, pc);
    /* The mask is for the verifier (PT_UNWIND_MAPS is a power of two). */
    const struct pt_umap *m = w->proc && mi >= 0 ? &w->proc->m[mi & (PT_UNWIND_MAPS - 1)] : NULL;
    __u64 vaddr = m ? pc - m->bias : 0;
    struct pt_urow r = { .kind = PT_CFA_NONE };
    if (m && vaddr <= 0xffffffffull)
        urow_find(m->bin, (__u32)vaddr, &r);
    if (r.kind == PT_CFA_END)
        return 1;
    if (r.kind == PT_CFA_NONE) {
        if (!m) {
            struct pt_jvm_layout *l = java_code(w, pc);
            if (l)
                return java_step(w, l, nr);
            if (fp_step(w))
                return 0;
            st->flags |= PT_USTACK_UNCOVERED;
        }
        st->flags |= PT_USTACK_TRUNCATED;
        return 1;
    }
    __u64 cfa;
    if (r.kind == PT_CFA_RSP)
        cfa = w->sp + 8ull * r.cfa_words;
    else if (r.kind == PT_CFA_RBP)
        cfa = w->bp + 8ull * r.cfa_words;
    else    /* PT_CFA_PLT */
        cfa = w->sp + 8 + ((w->ip & 15) >= 11 ? 8 : 0);
    __u64 ra;
    if (stack_word(w, cfa - 8, &ra)) {
        st->flags |= PT_USTACK_TRUNCATED;
        return 1;
    }
    if (r.rbp_words) {
        __u64 bp;
        if (stack_word(w, cfa + 8ll * r.rbp_words, &bp)) {
            st->flags |= PT_USTACK_TRUNCATED;
            return 1;
        }
        w->bp = bp;
    }
    remember_check(w, nr, cfa - 8, ra, false);
    w->sp = cfa;
    w->ip = ra;
    return 0;
}

/* Stores a walked stack under its id (the hash folded to 30 bits, marked
 * PT_USTACK_ID); a different stack already there moves it one id on. */
static __always_inline __s32 ustack_store(struct pt_ustack *st, bool *fresh)
{
    __u64 h = st->hash;
    for (int probe = 0; probe < 2; probe++) {
        __u32 id = PT_USTACK_ID | ((((__u32)(h >> 32) ^ (__u32)h) + probe) & (PT_USTACK_ID - 1));
        struct pt_ustack *old = bpf_map_lookup_elem(&ustacks, &id);
        if (old) {
            if (old->hash == h)
                return id;
            continue;
        }
        long err = bpf_map_update_elem(&ustacks, &id, st, BPF_NOEXIST);
        *fresh = !err;
        if (!err || err == -17)
            return id;
        drop_stacks_table_err = err;
        return -1;
    }
    drop_stacks_table_err = 1;
    return -1;
}

/* What unwind_user returns when it gives no stack id. */
#define UNWIND_BY_FP (-1)     /* the process is walked by frame pointers (a JVM) */
#define UNWIND_FAILED (-2)    /* the stack table is full */
#define UNWIND_LATER (-3)     /* tables asked for, not there yet: frame pointers this time */

/* The current thread's user stack from its user registers, unwound with
 * its process's tables: the stack id, or UNWIND_*. Global, so the verifier
 * checks the walk once per program rather than at every call site. */
__noinline int unwind_user(__u64 ip, __u64 sp, __u64 bp, struct pt_stack_cache *c)
{
    if (!c)
        return UNWIND_FAILED;
    __u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
    struct pt_uproc *p = bpf_map_lookup_elem(&unwind_procs, &tgid);
    if (!p) {
        __u8 one = 1;
        if (!bpf_map_update_elem(&unwind_asked, &tgid, &one, BPF_NOEXIST))
            ready_post(PT_READY_UNWIND, tgid, 0, 0);
        return UNWIND_LATER;
    }
    if (!p->n)
        return UNWIND_BY_FP;
    struct pt_ustack *st = bpf_map_lookup_elem(&ustack_scratch, &zero);
    if (!st)
        return UNWIND_FAILED;
    st->nr = 0;
    st->flags = 0;
    for (int j = 0; j < PT_CACHE_CHECKS; j++)
        c->chk_addr[j] = 0;
    c->nchecks = 0;
    struct uwalk w = {
        .ip = ip, .sp = sp, .bp = bp,
        .hash = 0xcbf29ce484222325ull, .proc = p, .st = st, .cache = c,
        .tid = (__u32)bpf_get_current_pid_tgid(),
        .win = bpf_map_lookup_elem(&stack_window, &zero),
    };
    if (w.win) {
        w.win->base = sp & ~((1ull << PT_WIN_SHIFT) - 1);
        w.win->loaded = 0;
        w.win_gen = ++w.win->gen;
    }
    __u64 t0 = bpf_ktime_get_ns();
    bpf_loop(PT_MAX_FRAMES + 1, unwind_step, &w, 0);
    /* Walks are rare (the thread's cache serves repeats): timing each one
     * gives --self-stats the cost of a stack. */
    struct pt_hot_counts *h = hot();
    if (h) {
        __sync_fetch_and_add(&h->unwind_walks, 1);
        __sync_fetch_and_add(&h->unwind_walk_ns, bpf_ktime_get_ns() - t0);
        __sync_fetch_and_add(&h->unwind_frames, st->nr);
    }
    st->hash = (w.hash ^ st->flags) * 0x9E3779B97F4A7C15ull;
    bool fresh = false;
    __s32 id = ustack_store(st, &fresh);
    if (id < 0)
        return UNWIND_FAILED;
    /* A new stack is copied by user space at once, before the table lets it
     * go, and a JVM's named while its JIT code is known. */
    if (fresh)
        ready_post(PT_READY_STACK, tgid, id, 0);
    /* Walked before the JVM and its code cache were known: held until they are. */
    c->early = (st->flags & PT_USTACK_EARLY) != 0;
    /* Cut at code without a table (one still being built?): held until the
     * process's tables change. */
    c->cut_gen = st->flags & PT_USTACK_UNCOVERED ? p->gen + 1 : 0;
    return id;
}

/* The words the last walk checked are still in place: the same call path,
 * not another caller that reached the same ip at the same depth. Global,
 * so the verifier checks its loop once, not at every call site. */
__noinline int ustack_cache_holds(const struct pt_stack_cache *c)
{
    if (!c)
        return 0;
    /* Its Java frames were walked blind: once the JVM and its code cache
     * are known the stack is walked again. Until then it holds: a poisoned
     * entry made every wait of a starting JVM walk, which spent the budget
     * for seconds, and its failed check cost a read at every wait after (a
     * Java ping-pong's switch 760 ns, 20 000 walks left out, against 560 ns
     * and none). */
    if (c->early) {
        __u32 tgid = bpf_get_current_pid_tgid() >> 32;
        const struct pt_jvm_layout *l = bpf_map_lookup_elem(&jvm_layouts, &tgid);
        if (l && jvm_code_known(l))
            return 0;
    }
    /* A stack cut at uncovered code is walked again once its process's
     * tables changed: only such stacks pay for the lookup. */
    if (c->cut_gen) {
        __u32 tgid = bpf_get_current_pid_tgid() >> 32;
        const struct pt_uproc *p = bpf_map_lookup_elem(&unwind_procs, &tgid);
        if (p && p->gen + 1 != c->cut_gen)
            return 0;
    }
    /* The checked words lie up the stack in walk order: those within
     * PT_CHECK_SPAN of the first come with one copy, not a read each (ten
     * reads cost a Java ping-pong's waking 620 ns). */
    __u64 lo = c->chk_addr[0], hi = lo;
    if (!lo)
        return 1;
    for (int j = 1; j < PT_CACHE_CHECKS; j++) {
        __u64 a = c->chk_addr[j];
        if (!a)
            break;
        /* Branch-free (above): each branch on hi or on an offset below
         * forked the verifier's walk, and its paths multiplied. */
        __u64 take = above(a, hi) & (1 - above(a - lo, PT_CHECK_SPAN - 8));
        hi += take * (a - hi);
    }
    __u32 zero = 0;
    __u8 *buf = bpf_map_lookup_elem(&check_span, &zero);
    __u64 len = hi - lo + 8;
    if (len > PT_CHECK_SPAN || !buf || bpf_probe_read_user(buf, (__u32)len, (void *)lo))
        len = 0;
    for (int j = 0; j < PT_CACHE_CHECKS; j++) {
        __u64 v, a = c->chk_addr[j], off = a - lo;
        if (!a)
            break;
        __u64 in = (1 - above(lo, a)) & (1 - above(off + 8, len));
        if (buf && in)
            v = *(__u64 *)(buf + (off & (PT_CHECK_SPAN - 1)));
        else if (bpf_probe_read_user(&v, sizeof(v), (void *)a))
            return 0;
        if (v != c->chk_val[j])
            return 0;
    }
    return 1;
}

#endif
