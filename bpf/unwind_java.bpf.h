/* The stack walker's Java frames: where a thread left Java code
 * (JavaThread::_anchor), whether a pc is in the JVM's code cache, and one
 * step over an interpreted or compiled frame. Included by unwind.bpf.h,
 * between fp_step and unwind_step.
 *
 * Owns: java_anchor, java_code, blob_frame_words, the map blob_cache and
 * blob_words, java_step.
 *
 * Shared: reads jvm_layouts and java_threads (jvm.bpf.h); uses struct uwalk
 * and fp_step (unwind.bpf.h). */
#ifndef PT_UNWIND_JAVA_BPF_H
#define PT_UNWIND_JAVA_BPF_H

/* The thread's last Java frame, as the JVM recorded it when the thread left
 * Java code (JavaThread::_anchor): where the Java walk starts, whatever the
 * native frames below it were. */
static __always_inline bool java_anchor(struct uwalk *w, const struct pt_jvm_layout *l)
{
    __u64 *jt = bpf_map_lookup_elem(&java_threads, &w->tid);
    __u64 sp = 0, pc = 0, fp = 0;
    if (!jt || !l->anchor_sp ||
        bpf_probe_read_user(&sp, sizeof(sp), (void *)(*jt + l->anchor_sp)) || !sp ||
        bpf_probe_read_user(&pc, sizeof(pc), (void *)(*jt + l->anchor_pc)) ||
        bpf_probe_read_user(&fp, sizeof(fp), (void *)(*jt + l->anchor_fp)))
        return false;
    /* No recorded pc: the return address just below the frame is it. */
    if (!pc && stack_word(w, sp - 8, &pc))
        return false;
    w->sp = sp;
    w->ip = pc;
    if (fp)
        w->bp = fp;
    return true;
}

/* The JVM of the walked process when PC lies in its code cache. */
static __always_inline struct pt_jvm_layout *java_code(struct uwalk *w, __u64 pc)
{
    if (!w->proc || !(w->proc->flags & PT_UPROC_JVM))
        return NULL;
    if (!w->jvm) {
        __u32 tgid = bpf_get_current_pid_tgid() >> 32;
        w->jvm = bpf_map_lookup_elem(&jvm_layouts, &tgid);
        if (!w->jvm) {
            /* Java code before the JVM is known: named poorly, so walked
             * again once it is (ustack_cache_holds). */
            if (w->st)
                w->st->flags |= PT_USTACK_EARLY;
            return NULL;
        }
    }
    struct pt_jvm_layout *l = w->jvm;
    /* A JVM found before its code cache was set up has no range yet (read
     * again each tick): its frames are walked blind until it comes. */
    if (!jvm_code_known(l)) {
        if (w->st)
            w->st->flags |= PT_USTACK_EARLY;
        return NULL;
    }
    return pc >= l->code_lo && pc < l->code_hi ? l : NULL;
}

#define CODE_HEAP_HOPS 24

/* The size in words of the compiled frame whose code holds PC, or 0: the
 * code blob is found the way CodeHeap::find_blob does, hopping back through
 * the segment map to the block's first segment. Global: checked once. */
__noinline int blob_frame_words(const struct pt_jvm_layout *l, __u64 pc)
{
    if (!l || !l->blob_frame_size)
        return 0;
    for (int h = 0; h < PT_CODE_HEAPS; h++) {
        const struct pt_code_heap *ch = &l->heaps[h];
        if (pc < ch->lo || pc >= ch->hi || ch->log2_segment > 16)
            continue;
        __u64 seg = (pc - ch->lo) >> ch->log2_segment;
        for (int i = 0; i < CODE_HEAP_HOPS; i++) {
            __u8 hop;
            if (bpf_probe_read_user(&hop, 1, (void *)(ch->segmap + seg)) || hop == 0xff)
                return 0;
            if (hop == 0) {
                __u64 blob = ch->lo + (seg << ch->log2_segment) + l->block_header;
                __s32 words = 0;
                bpf_probe_read_user(&words, sizeof(words), (void *)(blob + l->blob_frame_size));
                return words;
            }
            if (hop > seg)
                return 0;
            seg -= hop;
        }
        return 0;
    }
    return 0;
}

/* The frame sizes of compiled code found last on this CPU, by (process,
 * return address), each under the safepoint count it was read at: a
 * compiled frame's size costs three or four reads of the JVM's memory
 * (700 ns a frame on H2), and code is freed only once a safepoint has
 * seen it on no stack. Kept only for JVMs whose safepoints are probed
 * (stable_oops). */
#define PT_BLOB_CACHE 256
struct blob_cached {
    __u64 pc;
    __u32 tgid, gen;
    __s32 words, pad;
};
struct blob_cache {
    struct blob_cached e[PT_BLOB_CACHE];
};
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct blob_cache);
} blob_cache SEC(".maps");

/* blob_frame_words through this CPU's blob cache. */
static __always_inline __s32 blob_words(const struct pt_jvm_layout *l, __u64 pc)
{
    __u32 zero = 0, gen = *(volatile __u32 *)&safepoint_gen, tgid = bpf_get_current_pid_tgid() >> 32;
    struct blob_cache *bc = l->stable_oops ? bpf_map_lookup_elem(&blob_cache, &zero) : NULL;
    if (!bc)
        return blob_frame_words(l, pc);
    struct blob_cached *c = &bc->e[((__u32)pc ^ (__u32)(pc >> 12) ^ tgid) & (PT_BLOB_CACHE - 1)];
    if (c->gen == gen && c->pc == pc && c->tgid == tgid)
        return c->words;
    __s32 words = blob_frame_words(l, pc);
    c->pc = pc;
    c->tgid = tgid;
    c->words = words;
    c->gen = gen;
    return words;
}

/* One Java frame at w->ip. Interpreted frames keep rbp and their Method*;
 * compiled ones keep rbp only with -XX:+PreserveFramePointer, and are
 * otherwise stepped over by their code blob's frame size; the call stub
 * back into the VM keeps rbp. Returns 0 to go on. */
static __always_inline long java_step(struct uwalk *w, const struct pt_jvm_layout *l, __u32 nr)
{
    struct pt_ustack *st = w->st;
    if (!st)
        return 1;
    if (w->java_frames++ == 0)
        java_anchor(w, l);
    if (w->ip >= l->interp_lo && w->ip < l->interp_hi && l->method_slot < 0 && l->method_slot > -16) {
        /* Method*, ..., sender sp, saved rbp, return address: fp + 8 * [slot .. 1];
         * four of those words are read (through the stack's window). */
        __s32 slot = l->method_slot;
        __u64 base = w->bp + 8ll * slot, method, sender_sp, sender_bp, ra;
        if (w->bp <= w->sp || w->bp - w->sp > UNWIND_FP_SPAN || stack_word(w, base, &method) ||
            stack_word(w, w->bp - 8, &sender_sp) || stack_word(w, w->bp, &sender_bp) ||
            stack_word(w, w->bp + 8, &ra)) {
            st->flags |= PT_USTACK_TRUNCATED;
            return 1;
        }
        if (nr < PT_MAX_FRAMES)
            st->ip[nr] = method | PT_FRAME_METHOD;
        w->hash = (w->hash ^ method) * 0x9E3779B97F4A7C15ull;
        w->sp = sender_sp;
        w->bp = sender_bp;
        w->ip = ra;
        /* Its caller's return address is the interpreter's whatever the
         * call site: its Method* tells which method this frame runs. */
        remember_check(w, nr, base, method, true);
        remember_check(w, nr, base + 8ull * (1 - slot), w->ip, true);
        return 0;
    }
    if ((l->preserve_fp || w->ip == l->call_stub_ra) && fp_step(w)) {
        remember_check(w, nr, w->sp - 8, w->ip, true);
        return 0;
    }
    __s32 words = blob_words(l, w->ip);
    if (words > 1 && words < 65536) {
        /* The sender's sp is past the frame; the return address and the
         * caller's rbp are its last two words. */
        __u64 sender = w->sp + 8ull * words, fr[2];
        if (!stack_word(w, sender - 16, &fr[0]) && !stack_word(w, sender - 8, &fr[1])) {
            w->sp = sender;
            w->bp = fr[0];
            w->ip = fr[1];
            remember_check(w, nr, sender - 8, w->ip, true);
            return 0;
        }
    } else if (w->java_frames == 1 && fp_step(w)) {
        remember_check(w, nr, w->sp - 8, w->ip, true);
        return 0;      /* the frame that left Java code keeps rbp (a native wrapper) */
    }
    st->flags |= PT_USTACK_TRUNCATED;
    return 1;
}

#endif
