/* Named frames and stacks: plain data, shared by the code that names
 * them (symbolize.c, stacks.c) and the model the writers read (model.h). */
#ifndef PT_FRAMES_H
#define PT_FRAMES_H
#include <stdbool.h>
#include <stdint.h>

/* The frame that ends a stack cut short (no CFI, unreadable memory, the
 * depth limit): its outermost frame, so collapsed stacks show it next to
 * the process. */
#define PT_TRUNCATED_FRAME "[truncated]"

/* The module of a Java frame named from the JVM. */
#define PT_JAVA_MODULE "[java]"

struct pt_frame {
    char *name;
    char *module;      /* basename of the mapped file, or NULL */
};

struct pt_stack {
    int n;
    struct pt_frame *frames;   /* innermost first; the last is PT_TRUNCATED_FRAME when truncated */
    bool unwound;              /* from a CFI unwind, in the kernel or of a stack copy */
    bool truncated;
    /* Different each time frames are named (again, in place): what was
     * read off a stack holds while this does. 0 for a stack never named. */
    uint64_t naming;
    bool blind;                /* its Java frames walked before the JVM was known: named poorly */
};

#endif
