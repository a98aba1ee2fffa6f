#include "jvm_objects.h"

#include <stdio.h>
#include <string.h>

static bool read_u32(const struct jvm *j, uint64_t addr, uint32_t *v)
{
    return procmem_read(&j->mem, addr, v, sizeof(*v));
}

/* Whether the JVM's objects move only inside a safepoint: true for the
 * collectors that stop the world to move them (ZGC and Shenandoah move
 * them while Java runs), false when the flags cannot be read. */
static bool stop_the_world_collector(const struct jvm *j)
{
    static const char *const stw[] = {"UseG1GC", "UseParallelGC", "UseSerialGC", "UseEpsilonGC"};
    static const char *const concurrent[] = {"UseZGC", "UseShenandoahGC"};
    bool on = false, any = false;
    for (size_t i = 0; i < sizeof(concurrent) / sizeof(concurrent[0]); i++)
        if (!jvm_flag(j, concurrent[i], &on) || on)
            return false;
    for (size_t i = 0; i < sizeof(stw) / sizeof(stw[0]); i++)
        any |= jvm_flag(j, stw[i], &on) && on;
    return any;
}

int jvm_layout_read(struct jvm *j, struct jvm_layout *l)
{
    uint64_t a_oop_base, a_oop_shift, a_klass_base, a_klass_shift, blocker_var;
    uint32_t blocker_off;
    memset(l, 0, sizeof(*l));
    if (!jvm_offset(j, "JavaThread", "_threadObj", &l->thread_obj) ||
        !jvm_offset(j, "OopHandle", "_obj", &l->handle_obj) ||
        !jvm_offset(j, "Klass", "_name", &l->klass_name) ||
        !jvm_offset(j, "Symbol", "_length", &l->sym_length) ||
        !jvm_offset(j, "Symbol", "_body", &l->sym_body) ||
        !jvm_static(j, "CompressedOops", "_narrow_oop._base", &a_oop_base) ||
        !jvm_static(j, "CompressedOops", "_narrow_oop._shift", &a_oop_shift) ||
        !jvm_static(j, "CompressedKlassPointers", "_narrow_klass._base", &a_klass_base) ||
        !jvm_static(j, "CompressedKlassPointers", "_narrow_klass._shift", &a_klass_shift)) {
        snprintf(j->error, sizeof(j->error), "JVM %d: vmStructs lacks a field parktrace needs", j->pid);
        return -1;
    }
    blocker_var = jvm_symbol(j, "_ZN16java_lang_Thread20_park_blocker_offsetE");
    /* 0 until the JVM has initialised java.lang.Thread: not ready yet. */
    if (blocker_var && read_u32(j, blocker_var, &blocker_off) && blocker_off == 0)
        return 1;
    if (!blocker_var || !read_u32(j, blocker_var, &blocker_off) ||
        !jvm_flag(j, "UseCompressedOops", &l->compressed_oops) ||
        !jvm_flag(j, "UseCompressedClassPointers", &l->compressed_klass) ||
        !procmem_u64(&j->mem, a_oop_base, &l->oop_base) || !read_u32(j, a_oop_shift, &l->oop_shift) ||
        !procmem_u64(&j->mem, a_klass_base, &l->klass_base) || !read_u32(j, a_klass_shift, &l->klass_shift)) {
        snprintf(j->error, sizeof(j->error),
                 "JVM %d: cannot read java.lang.Thread.parkBlocker's offset or the compressed-pointer "
                 "settings (libjvm without symbols?)", j->pid);
        return -1;
    }
    /* HotSpot shifts by 0 or 3 (object alignment); 64 or more would be
     * undefined here and meaningless in the kernel's decoding. */
    if (l->oop_shift > 31 || l->klass_shift > 31) {
        snprintf(j->error, sizeof(j->error), "JVM %d: compressed-pointer shift %u/%u is not a JVM's", j->pid,
                 l->oop_shift, l->klass_shift);
        return -1;
    }
    l->park_blocker = blocker_off;
    l->stw_collector = stop_the_world_collector(j);
    if (!jvm_offset(j, "Klass", "_super", &l->klass_super))
        l->klass_super = 0;
    /* Only the uprobe mode needs it, to find an unparked thread. */
    uint64_t eetop_var = jvm_symbol(j, "_ZN16java_lang_Thread13_eetop_offsetE");
    uint32_t eetop_off;
    if (eetop_var && read_u32(j, eetop_var, &eetop_off))
        l->eetop = eetop_off;
    /* A java.util.concurrent lock's owner, for wait chains: set once the
     * JVM has loaded the class (0 before: read again at the next layout). */
    uint64_t owner_var = jvm_symbol(j, "_ZN54java_util_concurrent_locks_AbstractOwnableSynchronizer13_owner_offsetE");
    uint32_t owner_off;
    if (owner_var && read_u32(j, owner_var, &owner_off))
        l->aos_owner = owner_off;
    if (!jvm_offset(j, "oopDesc", l->compressed_klass ? "_metadata._compressed_klass" : "_metadata._klass",
                    &l->klass)) {
        snprintf(j->error, sizeof(j->error), "JVM %d: vmStructs lacks oopDesc's klass field", j->pid);
        return -1;
    }
    return 0;
}

/* Reads a reference field at ADDR: a narrow oop when oops are compressed. */
static bool read_ref(const struct jvm *j, const struct jvm_layout *l, uint64_t addr, uint64_t *oop)
{
    if (!l->compressed_oops)
        return procmem_u64(&j->mem, addr, oop);
    uint32_t narrow;
    if (!read_u32(j, addr, &narrow))
        return false;
    *oop = narrow ? l->oop_base + ((uint64_t)narrow << l->oop_shift) : 0;
    return true;
}

bool jvm_park_blocker(const struct jvm *j, const struct jvm_layout *l, uint64_t thread, uint64_t *oop)
{
    uint64_t handle, thread_oop;
    /* _threadObj is an OopHandle: a pointer to a slot holding the oop. */
    return procmem_u64(&j->mem, thread + l->thread_obj + l->handle_obj, &handle) && handle &&
           procmem_u64(&j->mem, handle, &thread_oop) && thread_oop &&
           read_ref(j, l, thread_oop + l->park_blocker, oop);
}

bool jvm_object_class(const struct jvm *j, const struct jvm_layout *l, uint64_t oop, char *name, size_t len)
{
    uint64_t klass;
    if (l->compressed_klass) {
        uint32_t narrow;
        if (!read_u32(j, oop + l->klass, &narrow) || !narrow)
            return false;
        klass = l->klass_base + ((uint64_t)narrow << l->klass_shift);
    } else if (!procmem_u64(&j->mem, oop + l->klass, &klass)) {
        return false;
    }
    return jvm_klass_name(j, l, klass, name, len);
}

bool jvm_klass_supers(const struct jvm *j, const struct jvm_layout *l, uint64_t klass, char *supers, size_t len)
{
    size_t used = 0;
    char name[256];
    supers[0] = '\0';
    /* A bounded walk: class hierarchies are shallow, memory may be hostile. */
    for (int depth = 0; depth < 16 && l->klass_super; depth++) {
        if (!procmem_u64(&j->mem, klass + l->klass_super, &klass) || !klass ||
            !jvm_klass_name(j, l, klass, name, sizeof(name)) || strcmp(name, "java.lang.Object") == 0)
            break;
        int n = snprintf(supers + used, len - used, "%s%s", used ? ";" : "", name);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    return used > 0;
}

bool jvm_klass_name(const struct jvm *j, const struct jvm_layout *l, uint64_t klass, char *name, size_t len)
{
    uint64_t symbol;
    uint16_t n;
    if (!klass || !procmem_u64(&j->mem, klass + l->klass_name, &symbol) ||
        !procmem_read(&j->mem, symbol + l->sym_length, &n, sizeof(n)) || n == 0 || n >= len ||
        !procmem_read(&j->mem, symbol + l->sym_body, name, n))
        return false;
    name[n] = '\0';
    /* Internal names use '/': java/util/concurrent/... */
    for (char *p = name; *p; p++)
        if (*p == '/')
            *p = '.';
    return true;
}
