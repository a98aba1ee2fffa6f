/* What the unwind tables' files share (unwind_tables.c,
 * unwind_binaries.c): the binaries known, their owners' shares, the
 * tables. Not for other code, which uses unwind_tables.h. */
#ifndef PT_UNWIND_TABLES_PARTS_H
#define PT_UNWIND_TABLES_PARTS_H
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../bpf/parktrace.h"
#include "file_id.h"
#include "unwind_isolated.h"
#include "unwind_maps.h"
#include "unwind_tables.h"

/* A binary's table while it has none (bin >= 0 once published). */
#define BIN_NONE (-1)        /* no usable CFI, or its build failed: for good */
#define BIN_BUILDING (-2)    /* a child builds it (unwind_isolated.h) */
#define BIN_WAITING (-3)     /* to be built once a child is free */
/* None now: let go for room, or refused for room or its owner's build
 * time; made again when a process maps it again. */
#define BIN_LATER (-4)

/* A binary, known by its file identity. */
struct binary {
    struct file_id id;        /* a file rewritten or its inode reused is another */
    uid_t owner;              /* the file's owner, whose share a child's build counts in */
    int bin;
    size_t bytes, rows;       /* its table in the kernel (0: another binary's, shared) */
    char name[64];            /* file name, for --self-stats */
    /* Its PT_LOAD segments, to turn a mapping's file offset into a load bias. */
    struct load { uint64_t offset, vaddr, filesz; } loads[8];
    int nloads;
    /* Build-id and a checksum of the CFI: one file seen by two paths (a
     * container's copy) shares one table, and the cache's key. Empty for a
     * file a non-root user can write, which shares and stores nothing. */
    uint8_t key[UNWIND_CACHE_KEY_MAX];
    size_t key_len;
    bool root_only;           /* else its CFI is read in a child (unwind_isolated.h) */
    bool known;               /* else a free slot */
    uint64_t seen_ns;         /* when a process's publishing last met it */
    uint32_t next;            /* index + 1 of the next in its hash bucket, or of the next free slot */
};

/* Builds in children at once; past them a binary waits its turn. */
#define MAX_BUILDS UNWIND_BUILDS
/* Processes to publish again once a build ends (they map a binary whose
 * table was not there yet); past it, the oldest are let go. */
#define MAX_WAITING 256
/* What the builds of one owner's files may take: the owners of
 * user-written files, each of whom could write binaries that take a
 * child its whole limit, share the children and the kernel's memory. Each
 * owner has one child at a time and OWNER_BUILD_NS of children's time at
 * once (isolated_build_poll: their builds and forks, less the time they
 * were runnable but not run), given back at one second in OWNER_REFILL (a
 * user's own JDK takes a fraction of a second). */
#define OWNER_BUILD_NS (8ull * 1000000000u)
#define OWNER_REFILL 30
#define MAX_OWNERS 64
/* Binaries remembered (with or without a table): at it, those with no
 * table and none coming are forgotten (a long run meets ever new
 * binaries: every build a CI host makes); past it, new ones go without.
 * Of them, the files of one user other than root: OWNER_KNOWN. */
#define MAX_KNOWN UNWIND_TABLES_MAX_KNOWN
#define OWNER_KNOWN (MAX_KNOWN / 8)
/* Only binaries no publishing met for this long are forgotten: those of a
 * live process that maps more than fit are refused, not forgotten and
 * met again as new at its next publishing (a process of 9 300 of a
 * user's files: 120 000 forgotten and a core spent in 3 s). */
#define FORGET_AFTER_NS (10ull * 1000000000u)
/* Files a publishing opens at most: the kernel's list takes 64 mappings
 * with tables, and each file is an open and a read. */
#define PUBLISH_FILES 1024
#define BIN_BUCKETS 16384

struct owner_share {
    uid_t uid;
    uint64_t build_ns;        /* children's wall time on its files, less what was given back */
    uint64_t refilled_ns;     /* when build_ns was last given back to */
    size_t bytes;             /* kernel memory of its files' tables */
    int tables;               /* and how many there are */
    size_t known;             /* its binaries remembered */
};

struct unwind_tables {
    struct procmaps *maps;
    struct unwind_cache *cache;
    struct binary *bins;      /* slots: a binary's index stays while it is known */
    size_t nbins, capbins;    /* slots made */
    size_t nknown;            /* of them known */
    uint32_t free_slots;      /* index + 1 of the first free slot */
    uint32_t buckets[BIN_BUCKETS];   /* index + 1 of each bucket's first, by inode */
    uint32_t table_of[PT_UNWIND_BINS];   /* index + 1 of each table's own binary */
    int next_bin;
    struct unwind_maps kernel; /* the kernel's maps of tables and of processes */
    struct unwind_tables_usage usage;
    struct pt_uproc up;       /* a process's list, as it is written */
    uint32_t gen;             /* publishings so far (pt_uproc.gen) */
    struct { struct isolated_build *ib; size_t bin_index; } builds[MAX_BUILDS];
    int waiting[MAX_WAITING]; /* tgids to publish again */
    int nwaiting;
    struct owner_share owners[MAX_OWNERS];
    int nowners;
    int free_bins[PT_UNWIND_BINS];   /* indices of tables let go, to take again */
    int nfree;
    struct pt_uproc scan;     /* a process's list, as the sweep reads it */
    uint64_t swept_ns;        /* when evict_unmapped last ran */
    uint64_t publish_ns;      /* when the publishing under way began */
    uint64_t forget_after_ns; /* FORGET_AFTER_NS, or a test's */
};

/* Kernel memory (locked) for all tables; a binary past it goes without. */
#define TABLE_BUDGET (256u << 20)
/* What the files of one owner other than root may take of it, in bytes
 * and in tables (of PT_UNWIND_BINS). */
#define OWNER_TABLE_BUDGET (TABLE_BUDGET / 8)
#define OWNER_TABLES (PT_UNWIND_BINS / 8)

/* unwind_tables.c */
double unwind_cpu_s(void);
int unwind_publish_rows_table(struct unwind_tables *ut, struct binary *b, uint64_t *table, size_t n, size_t nrows);
int unwind_publish_rows(struct unwind_tables *ut, struct binary *b, struct unwind_rows *rows);
int unwind_start_build(struct unwind_tables *ut, const struct file_ref *f, size_t i);

/* unwind_binaries.c */
bool unwind_budget_spent(struct unwind_tables *ut);
bool unwind_share_spent(struct unwind_tables *ut, struct owner_share *o);
struct owner_share *unwind_share_of(struct unwind_tables *ut, uid_t owner);
bool unwind_owner_building(const struct unwind_tables *ut, uid_t owner);
void unwind_count_outcome(struct unwind_tables *ut, const struct binary *b);
struct binary *unwind_binary_of(struct unwind_tables *ut, const struct file_ref *f);

#endif
