/* Names for the Java frames of a stack: interpreted frames from the Method*
 * the interpreter keeps in each frame, JIT-compiled code from the perf map
 * the JVM writes when asked through its attach socket. Everything is read
 * from the live JVM with the layout it publishes (vmStructs). */
#ifndef PT_JVM_FRAMES_H
#define PT_JVM_FRAMES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../bpf/parktrace.h"
#include "jvm_objects.h"
#include "perfmap.h"

#define JVM_METHOD_CACHE 8192
/* JIT code the perf map does not name (yet): retried while the JVM lives. */
#define JVM_FRAME_UNNAMED "[jit-compiled]"

struct jvm_method_name {
    uint64_t method;
    char *name;
};

struct jvm_frames {
    bool ok;                        /* the layout below was read */
    uint64_t interp_lo, interp_hi;  /* the template interpreter's code */
    uint64_t code_lo, code_hi;      /* the whole code cache */
    int64_t method_slot;            /* Method* at fp + method_slot * 8 */
    uint64_t const_method, constants, name_index, pool_holder, pool_size;
    bool preserve_fp, attach_disabled;
    bool gone;                      /* exited or given up on: named from what is kept, no perf map asked for */
    struct perfmap perf;
    uint64_t perf_asked_ns;         /* last Compiler.perfmap request */
    int perf_requests;              /* how many were made */
    int perf_failures;
    /* When perf map requests resume after one that took too long: the
     * tracker's, shared by all its JVMs (NULL: never paused). */
    uint64_t *perf_paused_until;
    int listener_tid;               /* the attach listener parktrace started, or 0 */
    uint64_t listener_since;
    bool listener_uncounted;
    struct jvm_method_name cache[JVM_METHOD_CACHE];
};

/* Reads what naming needs from JVM J; frames stay unnamed when it fails. */
void jvm_frames_open(struct jvm_frames *f, struct jvm *j, const struct jvm_layout *l);
void jvm_frames_close(struct jvm_frames *f);

/* Reads where J's interpreter and code cache lie (0 while the JVM has not
 * set them up yet): jvm_frames_open does, and the tracker again for a JVM
 * found before they were. */
void jvm_frames_read_code_ranges(struct jvm_frames *f, const struct jvm *j);

/* Names the frame at PC whose frame pointer is FP (0 when unknown); SMP is
 * the stack copy the frame lies in. PC may also be a Method* marked with
 * PT_FRAME_METHOD (an interpreted frame the kernel walked). Returns false
 * when PC is not Java code. */
bool jvm_frames_name(struct jvm_frames *f, struct jvm *j, const struct jvm_layout *l, uint64_t pc,
                     uint64_t fp, const struct pt_sample *smp, char *out, size_t len);

#endif
