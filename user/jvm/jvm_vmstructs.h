/* HotSpot's own description of its data layout (the vmStructs table the
 * Serviceability Agent reads), read from a running JVM. parktrace takes
 * every offset from here and never compiles one in. */
#ifndef PT_JVM_VMSTRUCTS_H
#define PT_JVM_VMSTRUCTS_H
#include <stdbool.h>
#include <stdint.h>
#include "procmem.h"

struct vm_field {
    char *type;
    char *field;
    bool is_static;
    uint64_t offset;      /* of an instance field */
    uint64_t address;     /* of a static field */
};

struct elf_file;
struct procmaps;

struct vm_type {
    char *name;
    char *super;          /* NULL at the root */
    uint64_t size;
};

struct jvm {
    int pid;
    uint64_t start_time;   /* with the pid, names the process (procstatus_start_time) */
    struct procmem mem;
    struct elf_file *elf;  /* libjvm's symbols */
    char libjvm[256];      /* path of the mapped libjvm.so */
    uint64_t libjvm_at;    /* an address of its mapping whose symbols were read */
    uint64_t bias;
    struct vm_field *fields;
    int nfields;
    struct vm_type *types;
    int ntypes;
    char error[200];       /* why jvm_open failed, one line */
};

/* Returns 0; -1 when PID maps no libjvm.so (not a JVM); 1 when its tables
 * are not set up yet (libjvm mapped but not yet relocated: look again); -2
 * when it is a JVM whose table cannot be read (no symbols, unreadable
 * memory), with the reason in j->error. */
int jvm_open(struct jvm *j, struct procmaps *maps, int pid);
void jvm_close(struct jvm *j);

/* sizeof(TYPE) as HotSpot publishes it (the vmTypes table). */
bool jvm_type_size(const struct jvm *j, const char *type, uint64_t *size);

bool jvm_offset(const struct jvm *j, const char *type, const char *field, uint64_t *offset);
bool jvm_static(const struct jvm *j, const char *type, const char *field, uint64_t *address);

/* The runtime address of a libjvm symbol (mangled name), or 0. */
uint64_t jvm_symbol(const struct jvm *j, const char *name);

/* The value of the JVM's bool flag NAME (-XX:...), a libjvm variable of
 * that name; false when it cannot be read. */
bool jvm_flag(const struct jvm *j, const char *name, bool *v);

/* The OS thread ids of the JVM's JavaThreads into TIDS, and their
 * JavaThread pointers into THREADS (both of MAX entries), from
 * ThreadsSMRSupport's current list. Returns how many were stored, or -1
 * if the list cannot be believed (or was replaced under every read). */
int jvm_java_threads(const struct jvm *j, int *tids, uint64_t *threads, int max);

#endif
