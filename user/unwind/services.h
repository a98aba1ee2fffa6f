/* The services the collector calls: each process's mappings, the symbols of
 * their files, the kernel's unwind tables and the libdwfl unwinders. They
 * share state (a table is built from a process's maps, a frame is named
 * from a file's symbols), so they are made together here and freed
 * together, once, by main.c. */
#ifndef PT_SERVICES_H
#define PT_SERVICES_H

struct elfsyms;
struct procmaps;
struct unwind_tables;
struct unwinder;
struct unwind_maps;

struct pt_services {
    struct elfsyms *syms;          /* symbol tables per file, within a memory budget */
    struct procmaps *maps;         /* each process's mappings, and their files */
    struct unwind_tables *tables;  /* --unwind cfi: the kernel's CFI tables; else NULL */
    struct unwinder *unwinder;     /* --unwind copy: stack copies unwound with libdwfl */
};

/* With the kernel's unwind table maps KERNEL (--unwind cfi; NULL: none),
 * kept between runs in CACHE_DIR (NULL: nowhere). 0, or -1 with one line
 * on stderr when out of memory. */
int services_open(struct pt_services *sv, const struct unwind_maps *kernel, const char *cache_dir);
void services_close(struct pt_services *sv);

#endif
