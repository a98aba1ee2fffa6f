/* Java objects in a live HotSpot heap: a thread's park blocker and an
 * object's class name, decoded with the layout the JVM itself publishes
 * (vmStructs, its flags, java_lang_Thread's field offsets). The BPF side
 * follows the same chain; this is its user-space twin and reference. */
#ifndef PT_JVM_OBJECTS_H
#define PT_JVM_OBJECTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "jvm_vmstructs.h"

struct jvm_layout {
    uint64_t thread_obj;      /* JavaThread::_threadObj (an OopHandle) */
    uint64_t handle_obj;      /* OopHandle::_obj */
    uint64_t park_blocker;    /* java.lang.Thread.parkBlocker field offset */
    uint64_t eetop;           /* java.lang.Thread.eetop (its JavaThread*); 0 if unknown */
    uint64_t aos_owner;       /* AbstractOwnableSynchronizer.exclusiveOwnerThread; 0 if unknown */
    bool compressed_oops, compressed_klass;
    uint64_t oop_base, klass_base;
    uint32_t oop_shift, klass_shift;
    uint64_t klass;           /* oopDesc::_metadata._(compressed_)klass */
    uint64_t klass_name;      /* Klass::_name */
    uint64_t klass_super;     /* Klass::_super; 0 when unknown */
    uint64_t sym_length, sym_body;
    bool stw_collector;       /* its collector moves objects only in safepoints */
};

/* Returns 0; 1 when the JVM is still starting (java.lang.Thread not yet
 * initialised; try again); -1 with the reason in j->error. */
int jvm_layout_read(struct jvm *j, struct jvm_layout *l);

/* The parkBlocker object of JavaThread THREAD, 0 when it has none. */
bool jvm_park_blocker(const struct jvm *j, const struct jvm_layout *l, uint64_t thread, uint64_t *oop);

/* The name of class KLASS (a Klass*), as Java writes it. */
bool jvm_klass_name(const struct jvm *j, const struct jvm_layout *l, uint64_t klass, char *name, size_t len);

/* The superclasses of KLASS, nearest first, without java.lang.Object,
 * separated by ';' into SUPERS; false when none could be read. */
bool jvm_klass_supers(const struct jvm *j, const struct jvm_layout *l, uint64_t klass, char *supers, size_t len);

/* The class of object OOP, as Java writes it: java.util.concurrent.locks.ReentrantLock$NonfairSync. */
bool jvm_object_class(const struct jvm *j, const struct jvm_layout *l, uint64_t oop, char *name, size_t len);

#endif
