/* /proc/PID/maps, read once per process and kept after it exits, so a
 * process that ends mid-trace still gets names. */
#ifndef PT_PROCMAPS_H
#define PT_PROCMAPS_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct cgroup_name;

/* The kernel's default vm.max_map_count (65530), rounded up: the rest of
 * a longer list is left out. */
#define PROCMAPS_MAX_MAPS 65536
/* And at most this much of its text (a real process's is under a megabyte). */
#define PROCMAPS_MAX_TEXT (16u << 20)

struct elf_file;
struct elfsyms;
struct procmaps;

struct pm_map {
    uint64_t start, end, offset;
    dev_t dev;                /* the mapped file's device and inode */
    uint64_t ino;
    bool exec;
    char *path;               /* NULL for anonymous mappings; shared by a file's mappings */
    bool owns_path;           /* the one of them that frees it */
    struct elf_file *elf;     /* loaded on first use */
    bool elf_tried;
    uint64_t bias;            /* runtime address - file vaddr */
    uint32_t unwind_slot;     /* its binary's in unwind_tables.c, + 1: its next publishing opens nothing */
};

struct pm_proc {
    struct procmaps *owner;   /* whose symbol tables its files' are */
    int pid;
    char comm[16];
    uint32_t uid;             /* its effective uid when its maps were read; PT_UID_UNKNOWN (model.h): not read */
    const struct cgroup_name *cgroup;   /* its cgroup then, NULL: not read */
    int ns_pid;               /* its pid in its own pid namespace, 0 when that is ours */
    struct pm_map *maps;
    int nmaps;
    int rereads;
    bool exited;
    uint64_t gone_ns;         /* when it was first found exited (procmaps_forget_exited), or 0 */
    /* The file last read for one of its mappings: its other mappings take
     * it without opening it again (a process can map one file 65 536
     * times). */
    dev_t last_dev;
    uint64_t last_ino;
    struct elf_file *last_elf;
};

/* The maps of the processes seen, a bounded number of them, their files'
 * symbols in SYMS; made and freed by the services (services.h). */
struct procmaps *procmaps_new(struct elfsyms *syms);
void procmaps_free(struct procmaps *pm);

/* The cgroups of the processes read (cgroup_names.h), kept for the run. */
struct cgroup_names *procmaps_cgroups(struct procmaps *pm);

/* The cached maps of PID, reading them on first use. Never NULL. */
struct pm_proc *procmaps_get(struct procmaps *pm, int pid);

/* Lets go of the processes found exited at least PROCMAPS_GONE_NS before
 * NOW_NS (CLOCK_MONOTONIC), as seen by earlier calls: their stacks are
 * named by then. Called about once a second. */
#define PROCMAPS_GONE_NS 10000000000ULL
void procmaps_forget_exited(struct procmaps *pm, uint64_t now_ns);

/* How many processes' maps are held, and about how many bytes they take
 * (--self-stats). */
void procmaps_usage(const struct procmaps *pm, size_t *procs, size_t *bytes);

/* /proc/PID/maps opened for reading in big reads into BUF, LEN bytes (a
 * list can be long: read no more of it than PROCMAPS_MAX_TEXT), or NULL.
 * BUF is the caller's until the list is closed. */
FILE *procmaps_open_list(int pid, char *buf, size_t len);

/* Re-reads the maps of a live process (after a miss: dlopen, JIT). */
void procmaps_refresh(struct pm_proc *p);

/* Re-reads them now, whatever rereads it has had and even if an earlier
 * read found it gone: the caller knows its program changed (an exec seen
 * in its live maps). */
void procmaps_reread(struct pm_proc *p);

/* The mapping containing ADDR, or NULL. */
struct pm_map *procmaps_find(struct pm_proc *p, uint64_t addr);

/* The ELF file mapped at M, with its load bias; NULL if unreadable. */
struct elf_file *procmaps_elf(struct pm_proc *p, struct pm_map *m);

/* The file whose loaded image (including .bss past the file's end) covers
 * ADDR, with the file's virtual address of ADDR. */
struct elf_file *procmaps_image_at(struct pm_proc *p, uint64_t addr, uint64_t *vaddr);

/* Parses the text of a /proc/PID/maps file into P's maps (replacing them);
 * -1 when the list was cut short (too long, or out of memory). */
int procmaps_parse(FILE *f, struct pm_proc *p);

/* The file mapped at M, opened read-only: the mapping's own inode through
 * /proc/PID/map_files, else its path if that is still the same inode;
 * never anything but a regular file. -1 when it cannot be reached. */
int procmaps_open(const struct pm_proc *p, const struct pm_map *m);

#endif
