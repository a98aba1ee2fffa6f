/* Symbol tables of ELF files, read with libelf and cached per file.
 * Separate debug files are followed by build-id and .gnu_debuglink. */
#ifndef PT_ELFSYMS_H
#define PT_ELFSYMS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "file_id.h"

struct elf_sym {
    uint64_t addr;
    uint64_t size;
    const char *name;
    bool func;
};

struct elf_load {
    uint64_t offset, vaddr, filesz, memsz;
};

struct elfsyms;

struct elf_file {
    struct elfsyms *owner;    /* whose budget its symbols count in */
    /* The file (a user can rewrite a library in place, or delete it and
     * have its inode given to a new one). */
    struct file_id id;
    bool is_dyn;
    bool user_written;        /* a user other than root can change it (foreign_elf_root_only) */
    unsigned holds;           /* elfsyms_hold: while held, it is never freed */
    size_t slot;              /* in its owner's list */
    struct elf_file *next;    /* in its owner's hash bucket */
    struct elf_load *loads;
    int nloads;
    struct elf_sym *syms;     /* sorted by addr */
    size_t nsyms;
    char *strings;            /* owns every name */
    size_t strings_len, strings_cap;
    uint64_t last_use;        /* for dropping the symbols used longest ago */
    bool evicted;             /* symbols dropped to stay within the budget */
    /* The --unwind copy unwinder's scan of the file's CFI (unwind_rows_cfi_ok),
     * made once per file rather than once per process that maps it. */
    bool cfi_checked, cfi_ok;
    uint64_t reported;        /* the last of its process reports that named it (unwind.c) */
};

struct file_ref;

/* The symbol tables of the files the traced processes map, within one
 * memory budget; made and freed by the services (services.h). */
struct elfsyms *elfsyms_new(void);
void elfsyms_free(struct elfsyms *es);

/* The cached symbol table of the file open at F (one per inode), read on
 * first use, after its symbols were evicted, and after the file changed
 * (the same elf_file, read again); NULL when it is not an ELF file, or
 * when ELFSYMS_MAX_FILES files (half of that for files other users can
 * write) are held. F's descriptor stays the caller's. What it returns
 * stays valid until the next call: a caller that keeps it holds it. */
struct elf_file *elfsyms_get(struct elfsyms *es, const struct file_ref *f);

/* Files known at once: one not held (a process gone) is forgotten to make
 * room, since a user can map any number of files over a long run. */
#define ELFSYMS_MAX_FILES 16384

/* Keeps EF (NULL: nothing) until as many releases: a process's maps hold
 * their files, a JVM its libjvm. */
void elfsyms_hold(struct elf_file *ef);
void elfsyms_release(struct elf_file *ef);

/* The same for a file of parktrace's own at PATH (tests, tools). */
struct elf_file *elfsyms_get_path(struct elfsyms *es, const char *path);

/* Whether EF's symbols were dropped to stay within the memory budget: the
 * caller gets them back with elfsyms_get on the file. */
bool elfsyms_evicted(const struct elf_file *ef);

struct elfsyms_usage {
    size_t bytes;             /* symbol memory held now, the files' own records too */
    size_t evicted;           /* files whose symbols were dropped for room */
    size_t files;             /* files known now */
    size_t refused;           /* files not read: as many held already */
};
void elfsyms_usage(const struct elfsyms *es, struct elfsyms_usage *u);

/* The symbol covering VADDR (the file's own virtual address), FUNC or
 * OBJECT as asked, or NULL. */
const struct elf_sym *elfsyms_lookup(struct elf_file *ef, uint64_t vaddr, bool func);

/* The symbol named NAME (version suffix ignored), or NULL. A linear scan:
 * for one-time lookups such as HotSpot's exported tables. */
const struct elf_sym *elfsyms_find(const struct elf_file *ef, const char *name);

/* Converts a file offset to the file's virtual address; false if unmapped. */
bool elfsyms_offset_to_vaddr(const struct elf_file *ef, uint64_t off, uint64_t *vaddr);

/* Where debug files live; tests point it at their own tree. */
void elfsyms_set_debug_root(const char *dir);

#endif
