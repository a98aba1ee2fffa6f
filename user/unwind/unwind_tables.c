#include "unwind_tables.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../bpf/parktrace.h"
#include "build_id.h"
#include "file_id.h"
#include "foreign_elf.h"
#include "monotonic.h"
#include "procmaps.h"
#include "safe_open.h"
#include "unwind_cache.h"
#include "unwind_isolated.h"
#include "unwind_maps.h"
#include "unwind_rows.h"

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
 * owner has one child at a time and OWNER_BUILD_NS of children's wall
 * time at once, given back at one second in OWNER_REFILL (a user's own
 * JDK takes a fraction of a second). */
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

struct unwind_tables *unwind_tables_new(const struct unwind_maps *kernel, const char *cache_dir, struct procmaps *maps)
{
    struct unwind_tables *ut = calloc(1, sizeof(*ut));
    if (!ut)
        return NULL;
    ut->maps = maps;
    ut->kernel = *kernel;
    ut->cache = unwind_cache_open(cache_dir);
    ut->forget_after_ns = FORGET_AFTER_NS;
    return ut;
}

/* CPU time: on a loaded machine, wall time would mostly measure the wait
 * for a CPU. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Creates the kernel map for one binary's table and writes it in place;
 * *BYTES is what it takes. */
static int publish_table(struct unwind_tables *ut, const uint64_t *table, size_t n, size_t *bytes)
{
    int bin = ut->nfree ? ut->free_bins[ut->nfree - 1] : ut->next_bin;
    size_t len;
    if (unwind_maps_set_table(&ut->kernel, (uint32_t)bin, table, n, &len))
        return -1;
    ut->usage.bytes += len;
    *bytes = len;
    if (ut->nfree)
        ut->nfree--;
    else
        ut->next_bin++;
    return bin;
}

/* Whether SCN of ELF is a CFI section with contents in the file. */
static bool is_cfi(Elf *elf, size_t shstrndx, Elf_Scn *scn)
{
    GElf_Shdr sh;
    const char *n;
    return gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_size &&
           (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
           (strcmp(n, ".eh_frame") == 0 || strcmp(n, ".eh_frame_hdr") == 0 || strcmp(n, ".debug_frame") == 0);
}

/* A checksum of ELF's CFI sections, as they are in the file. */
static uint32_t cfi_crc(Elf *elf)
{
    size_t shstrndx;
    uLong crc = crc32(0, NULL, 0);
    if (elf_getshdrstrndx(elf, &shstrndx))
        return 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        Elf_Data *d;
        if (is_cfi(elf, shstrndx, scn) && (d = elf_rawdata(scn, NULL)) && d->d_buf)
            crc = crc32(crc, d->d_buf, (uInt)d->d_size);
    }
    return (uint32_t)crc;
}

/* Whether ELF may have CFI (its headers only): CFI sections, a
 * PT_GNU_EH_FRAME, or a note or debug link that can lead to a debug
 * file's. A file with none is no child's work. */
static bool may_have_cfi(Elf *elf)
{
    size_t nph, shstrndx;
    for (size_t i = 0; !elf_getphdrnum(elf, &nph) && i < nph; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && (ph.p_type == PT_GNU_EH_FRAME || ph.p_type == PT_NOTE))
            return true;
    }
    GElf_Shdr sh;
    if (foreign_elf_section(elf, ".gnu_debuglink", &sh))
        return true;
    if (elf_getshdrstrndx(elf, &shstrndx))
        return false;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn))
        if (is_cfi(elf, shstrndx, scn))
            return true;
    return false;
}

/* The loadable segments of the ELF file open at FD, and its key when
 * TRUSTED: only its program headers, notes and CFI bytes are read (symbols
 * are loaded when a stack is named, not here). Whether it may have CFI. */
static bool read_loads(int fd, bool trusted, struct binary *b)
{
    Elf *elf = foreign_elf_begin(fd);
    size_t n = 0;
    if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &n))
        for (size_t i = 0; i < n && b->nloads < 8; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(elf, (int)i, &ph))
                continue;
            if (ph.p_type == PT_LOAD)
                b->loads[b->nloads++] = (struct load){ph.p_offset, ph.p_vaddr, ph.p_filesz};
        }
    bool cfi = elf && elf_kind(elf) == ELF_K_ELF && may_have_cfi(elf);
    if (trusted && elf && elf_kind(elf) == ELF_K_ELF && (b->key_len = build_id_read(elf, b->key))) {
        uint32_t crc = cfi_crc(elf);
        memcpy(b->key + b->key_len, &crc, sizeof(crc));
        b->key_len += sizeof(crc);
    }
    if (elf)
        elf_end(elf);
    return cfi;
}

/* The load bias of a mapping of B at START from file offset OFFSET. */
static bool mapping_bias(const struct binary *b, uint64_t start, uint64_t offset, uint64_t *bias)
{
    for (int i = 0; i < b->nloads; i++)
        if (offset >= b->loads[i].offset && offset < b->loads[i].offset + b->loads[i].filesz) {
            *bias = start - (offset - b->loads[i].offset + b->loads[i].vaddr);
            return true;
        }
    return false;
}

/* Publishes TABLE (N words, NROWS rows) as B's, within the budget; its
 * bin, or BIN_NONE. */
static int publish_rows_table(struct unwind_tables *ut, struct binary *b, uint64_t *table, size_t n, size_t nrows)
{
    int bin = BIN_NONE;
    if (table && n * sizeof(uint64_t) > TABLE_BUDGET - ut->usage.bytes)
        ut->usage.over_budget++;
    else if (table)
        bin = publish_table(ut, table, n, &b->bytes);
    free(table);
    if (bin >= 0) {
        ut->usage.rows += nrows;
        b->rows = nrows;
        ut->table_of[bin] = (uint32_t)(b - ut->bins) + 1;
    }
    return bin;
}

/* Publishes ROWS (freed) as B's table, kept in the on-disk cache too when
 * B has a key (a binary only root can have written). */
static int publish_rows(struct unwind_tables *ut, struct binary *b, struct unwind_rows *rows)
{
    size_t n = 0;
    uint64_t *table = unwind_rows_table(rows, &n);
    size_t nrows = rows->n;
    unwind_rows_free(rows);
    if (table && b->key_len)
        unwind_cache_store(ut->cache, b->key, b->key_len, table, n, nrows);
    return publish_rows_table(ut, b, table, n, nrows);
}

/* Marks in USED (a bit per bin) the bins of process list P. */
static void mark_list(void *used_bins, const struct pt_uproc *p)
{
    uint8_t *used = used_bins;
    for (uint32_t i = 0; i < p->n && i < PT_UNWIND_MAPS; i++)
        if (p->m[i].bin < PT_UNWIND_BINS)
            used[p->m[i].bin / 8] |= (uint8_t)(1u << p->m[i].bin % 8);
}

/* Marks in USED the bins in a process list of the kernel's (every
 * published process that has not exited: the kernel drops a list at its
 * process's exit and exec) or in the one being written. False when the
 * walk did not finish: nothing may then be let go (a live process's list
 * would name a table since given to another binary). */
static bool mark_mapped(struct unwind_tables *ut, uint8_t *used)
{
    mark_list(used, &ut->up);
    /* A key the kernel deletes meanwhile restarts the walk from the first:
     * bounded at twice the map's 4096 entries. */
    return unwind_maps_each_proc(&ut->kernel, 8192, &ut->scan, mark_list, used);
}

static struct owner_share *share_of(struct unwind_tables *ut, uid_t owner);

/* Lets go of the tables no live process maps: a long run meets more
 * binaries than 4096 tables or 256 MiB hold (every short-lived tool a
 * shell runs), and a user's 512 tables would be spent for good by
 * programs long gone. A binary let go is made again if mapped again. */
static void evict_unmapped(struct unwind_tables *ut)
{
    /* At most once a second: each reads every process list, and a full
     * table asks at every new binary. */
    uint64_t now = monotonic_ns();
    if (ut->swept_ns && now - ut->swept_ns < 1000000000u)
        return;
    ut->swept_ns = now;
    uint8_t used[PT_UNWIND_BINS / 8] = {0};
    if (!mark_mapped(ut, used))
        return;
    for (size_t i = 0; i < ut->nbins; i++) {
        struct binary *b = &ut->bins[i];
        if (b->bin < 0 || (used[b->bin / 8] & (1u << b->bin % 8)))
            continue;
        if (b->bytes) {     /* the table's own binary, not one sharing it */
            unwind_maps_drop_table(&ut->kernel, (uint32_t)b->bin);
            ut->free_bins[ut->nfree++] = b->bin;
            ut->table_of[b->bin] = 0;
            ut->usage.bytes -= b->bytes;
            ut->usage.rows -= b->rows;
            ut->usage.evicted++;
            struct owner_share *o = b->root_only ? NULL : share_of(ut, b->owner);
            if (o) {
                o->bytes -= b->bytes < o->bytes ? b->bytes : o->bytes;
                o->tables -= o->tables > 0;
            }
        }
        b->bin = BIN_LATER;
        b->bytes = b->rows = 0;
    }
}

static bool room_left(const struct unwind_tables *ut)
{
    return (ut->next_bin < PT_UNWIND_BINS || ut->nfree) && ut->usage.bytes < TABLE_BUDGET;
}

static bool budget_spent(struct unwind_tables *ut)
{
    if (room_left(ut))
        return false;
    evict_unmapped(ut);
    if (room_left(ut))
        return false;
    ut->usage.over_budget++;
    return true;
}

/* Whether OWNER's share of tables is spent, once unmapped ones are let go. */
static bool share_spent(struct unwind_tables *ut, struct owner_share *o)
{
    if (o->bytes < OWNER_TABLE_BUDGET && o->tables < OWNER_TABLES)
        return false;
    evict_unmapped(ut);
    return o->bytes >= OWNER_TABLE_BUDGET || o->tables >= OWNER_TABLES;
}

/* The table of a binary only root can have written, open at F, built and
 * published here and now: from the cache, from a binary with the same
 * key, or from its CFI. Its bin, BIN_NONE, or BIN_LATER when there is no
 * room. */
static int trusted_table(struct unwind_tables *ut, const struct file_ref *f, struct binary *b)
{
    for (int bin = 0; b->key_len && bin < ut->next_bin; bin++) {
        const struct binary *o = ut->table_of[bin] ? &ut->bins[ut->table_of[bin] - 1] : NULL;
        if (o && o != b && o->key_len == b->key_len && memcmp(o->key, b->key, b->key_len) == 0)
            return bin;       /* same code, same table */
    }
    if (budget_spent(ut))
        return BIN_LATER;
    size_t n = 0, nrows = 0;
    uint64_t *table = b->key_len ? unwind_cache_load(ut->cache, b->key, b->key_len, &n, &nrows) : NULL;
    if (table)
        return publish_rows_table(ut, b, table, n, nrows);
    struct unwind_rows rows;
    return unwind_rows_build_ref(f, &rows) ? BIN_NONE : publish_rows(ut, b, &rows);
}

/* OWNER's share, its build time given back to up to now; NULL when
 * MAX_OWNERS others have theirs. */
static struct owner_share *share_of(struct unwind_tables *ut, uid_t owner)
{
    uint64_t now = monotonic_ns();
    struct owner_share *o = NULL;
    for (int i = 0; i < ut->nowners && !o; i++)
        if (ut->owners[i].uid == owner)
            o = &ut->owners[i];
    if (!o && ut->nowners == MAX_OWNERS)
        return NULL;
    if (!o) {
        o = &ut->owners[ut->nowners++];
        *o = (struct owner_share){.uid = owner, .refilled_ns = now};
    }
    uint64_t back = (now - o->refilled_ns) / OWNER_REFILL;
    o->build_ns = o->build_ns > back ? o->build_ns - back : 0;
    o->refilled_ns = now;
    return o;
}

static bool owner_building(const struct unwind_tables *ut, uid_t owner)
{
    for (int k = 0; k < MAX_BUILDS; k++)
        if (ut->builds[k].ib && ut->bins[ut->builds[k].bin_index].owner == owner)
            return true;
    return false;
}

/* Starts a child on the binary at index I, open at F, that a user could
 * have written: BIN_BUILDING, BIN_WAITING when its owner has a child at
 * work or every child is taken, or BIN_LATER when its owner's share or the
 * budget is spent (tried again when a process maps it again). */
static int start_build(struct unwind_tables *ut, const struct file_ref *f, size_t i)
{
    struct binary *b = &ut->bins[i];
    struct owner_share *o = share_of(ut, b->owner);
    if (!o || o->build_ns >= OWNER_BUILD_NS || share_spent(ut, o)) {
        ut->usage.owner_refused++;
        return BIN_LATER;
    }
    if (budget_spent(ut))
        return BIN_LATER;
    if (owner_building(ut, b->owner))
        return BIN_WAITING;
    for (int k = 0; k < MAX_BUILDS; k++) {
        if (ut->builds[k].ib)
            continue;
        if (!(ut->builds[k].ib = isolated_build_start(f)))
            return BIN_NONE;
        ut->builds[k].bin_index = i;
        return BIN_BUILDING;
    }
    return BIN_WAITING;
}

/* Counts B's outcome once it has one. */
static void count_outcome(struct unwind_tables *ut, const struct binary *b)
{
    if (b->bin >= 0)
        ut->usage.binaries++;
    else if (b->bin == BIN_NONE)
        ut->usage.without_cfi++;
}

static size_t bucket_of(const struct file_id *id)
{
    return (size_t)(inode_hash(id->dev, id->ino) % BIN_BUCKETS);
}

static struct binary *find_binary(struct unwind_tables *ut, const struct file_id *id)
{
    for (uint32_t i = ut->buckets[bucket_of(id)]; i; i = ut->bins[i - 1].next)
        if (file_id_equal(&ut->bins[i - 1].id, id))
            return &ut->bins[i - 1];
    return NULL;
}

/* Forgets B: its slot is free for another binary. */
static void forget_binary(struct unwind_tables *ut, struct binary *b)
{
    uint32_t self = (uint32_t)(b - ut->bins) + 1, *link = &ut->buckets[bucket_of(&b->id)];
    while (*link != self)
        link = &ut->bins[*link - 1].next;
    *link = b->next;
    struct owner_share *o = b->root_only ? NULL : share_of(ut, b->owner);
    if (o && o->known)
        o->known--;
    *b = (struct binary){.bin = BIN_NONE, .next = ut->free_slots};
    ut->free_slots = self;
    ut->nknown--;
    ut->usage.forgotten++;
}

/* Forgets the binaries with no table and no child at work on one (let go,
 * refused, waiting their turn, or without CFI), OWNER's alone when ANY is
 * false: they are met again as new ones if a process maps them again. */
static void forget_tableless(struct unwind_tables *ut, bool any, uid_t owner)
{
    evict_unmapped(ut);
    for (size_t i = 0; i < ut->nbins; i++) {
        struct binary *b = &ut->bins[i];
        if (b->known && b->bin < 0 && b->bin != BIN_BUILDING && ut->publish_ns - b->seen_ns >= ut->forget_after_ns &&
            (any || (!b->root_only && b->owner == owner)))
            forget_binary(ut, b);
    }
}

/* A slot for a new binary of that owner, or NULL past the bounds. */
static struct binary *new_binary(struct unwind_tables *ut, bool root_only, uid_t owner)
{
    struct owner_share *o = root_only ? NULL : share_of(ut, owner);
    if (o && o->known >= OWNER_KNOWN)
        forget_tableless(ut, false, owner);
    if (o && o->known >= OWNER_KNOWN) {
        ut->usage.owner_refused++;
        return NULL;
    }
    if (ut->nknown >= MAX_KNOWN)
        forget_tableless(ut, true, 0);
    if (ut->nknown >= MAX_KNOWN) {
        ut->usage.over_budget++;
        return NULL;
    }
    if (!ut->free_slots && ut->nbins == ut->capbins) {
        size_t cap = ut->capbins ? ut->capbins * 2 : 64;
        struct binary *b = realloc(ut->bins, cap * sizeof(*b));
        if (!b)
            return NULL;
        ut->bins = b;
        ut->capbins = cap;
    }
    struct binary *b;
    if (ut->free_slots) {
        b = &ut->bins[ut->free_slots - 1];
        ut->free_slots = b->next;
    } else {
        b = &ut->bins[ut->nbins++];
    }
    ut->nknown++;
    if (o)
        o->known++;
    *b = (struct binary){.known = true, .owner = owner, .root_only = root_only, .bin = BIN_NONE};
    return b;
}

/* The binary open at F; NULL when it cannot be read. */
static struct binary *binary_of(struct unwind_tables *ut, const struct file_ref *f)
{
    struct stat st;
    if (fstat(f->fd, &st))
        return NULL;
    struct file_id id = file_id_of(&st);
    struct binary *o = find_binary(ut, &id);
    if (o) {
        o->seen_ns = ut->publish_ns;
        size_t i = (size_t)(o - ut->bins);
        int was = o->bin;
        if (was == BIN_WAITING)
            o->bin = start_build(ut, f, i);
        else if (was == BIN_LATER)
            o->bin = o->root_only ? trusted_table(ut, f, o) : start_build(ut, f, i);
        if (o->bin != was)
            count_outcome(ut, o);
        return o;
    }
    struct binary *b = new_binary(ut, foreign_elf_root_only(&st), st.st_uid);
    if (!b)
        return NULL;
    b->id = id;
    b->seen_ns = ut->publish_ns;
    size_t h = bucket_of(&id);
    b->next = ut->buckets[h];
    ut->buckets[h] = (uint32_t)(b - ut->bins) + 1;
    const char *slash = strrchr(f->name, '/');
    snprintf(b->name, sizeof(b->name), "%.63s", slash ? slash + 1 : f->name);
    double t0 = now_s();
    bool cfi = read_loads(f->fd, b->root_only, b);
    b->bin = !cfi ? BIN_NONE : b->root_only ? trusted_table(ut, f, b) : start_build(ut, f, (size_t)(b - ut->bins));
    count_outcome(ut, b);
    ut->usage.build_seconds += now_s() - t0;
    return b;
}

static int by_start(const void *a, const void *b)
{
    const struct pt_umap *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static bool is_jvm(const struct pm_proc *p)
{
    for (int i = 0; i < p->nmaps; i++) {
        const char *path = p->maps[i].path;
        size_t n = path ? strlen(path) : 0;
        if (n >= 10 && strcmp(path + n - 10, "/libjvm.so") == 0)
            return true;
    }
    return false;
}

static int publish_process(struct unwind_tables *ut, int tgid, struct pm_proc *p);

int unwind_tables_add_process(struct unwind_tables *ut, int tgid)
{
    if (!ut)
        return -1;    /* --unwind copy */
    struct pm_proc *p = procmaps_get(ut->maps, tgid);
    procmaps_refresh(p);     /* the request follows an exec, or a first wait */
    return p->exited ? -1 : publish_process(ut, tgid, p);
}

void unwind_tables_refresh(struct unwind_tables *ut, int tgid)
{
    if (!ut)
        return;
    struct pm_proc *p = procmaps_get(ut->maps, tgid);
    int before = p->rereads;
    procmaps_refresh(p);     /* a few times per process at most */
    if (p->rereads != before && !p->exited)
        publish_process(ut, tgid, p);
}

/* TGID is published again when a build ends. */
static void wait_for_builds(struct unwind_tables *ut, int tgid)
{
    for (int i = 0; i < ut->nwaiting; i++)
        if (ut->waiting[i] == tgid)
            return;
    if (ut->nwaiting == MAX_WAITING)
        memmove(ut->waiting, ut->waiting + 1, --ut->nwaiting * sizeof(ut->waiting[0]));
    ut->waiting[ut->nwaiting++] = tgid;
}

/* M's binary as its last publishing found it, when nothing is to be done
 * with it that needs the file (a build to start, a table to make again):
 * a process published again after each build of its binaries opens none
 * of those it has (9 300 files a publishing, each build). */
static struct binary *binary_known_for(struct unwind_tables *ut, const struct pm_map *m)
{
    if (!m->unwind_slot || m->unwind_slot > ut->nbins)
        return NULL;
    struct binary *b = &ut->bins[m->unwind_slot - 1];
    if (!b->known || b->id.dev != (uint64_t)m->dev || b->id.ino != m->ino || b->bin == BIN_LATER ||
        (b->bin == BIN_WAITING && !owner_building(ut, b->owner)))
        return NULL;
    b->seen_ns = ut->publish_ns;
    return b;
}

/* TGID's executable mappings with tables, sorted, into the kernel. */
static int publish_process(struct unwind_tables *ut, int tgid, struct pm_proc *p)
{
    struct pt_uproc *up = &ut->up;
    bool pending = false;
    memset(up, 0, sizeof(*up));
    if (is_jvm(p))
        up->flags |= PT_UPROC_JVM;
    /* A file's mappings after its first take its binary unopened. */
    const struct pm_map *last = NULL;
    ptrdiff_t last_bin = -1;
    int opened = 0;
    ut->publish_ns = monotonic_ns();
    for (int i = 0; i < p->nmaps && up->n < PT_UNWIND_MAPS; i++) {
        struct pm_map *m = &p->maps[i];
        if (!m->exec || !m->path)
            continue;
        struct binary *b = NULL;
        if (last && last->dev == m->dev && last->ino == m->ino) {
            b = last_bin >= 0 ? &ut->bins[last_bin] : NULL;
        } else if ((b = binary_known_for(ut, m))) {
            last = m;
            last_bin = b - ut->bins;
        } else if (opened == PUBLISH_FILES) {
            ut->usage.files_skipped++;
            continue;
        } else {
            opened++;
            struct file_ref f = {.fd = procmaps_open(p, m), .name = m->path, .pid = tgid};
            b = f.fd >= 0 ? binary_of(ut, &f) : NULL;
            if (f.fd >= 0)
                close(f.fd);
            last = m;
            last_bin = b ? b - ut->bins : -1;
            m->unwind_slot = b ? (uint32_t)last_bin + 1 : 0;
        }
        pending |= b && (b->bin == BIN_BUILDING || b->bin == BIN_WAITING);
        uint64_t bias;
        if (!b || b->bin < 0 || !mapping_bias(b, m->start, m->offset, &bias))
            continue;
        up->m[up->n++] = (struct pt_umap){.start = m->start, .end = m->end, .bias = bias, .bin = (uint32_t)b->bin};
    }
    if (pending)
        wait_for_builds(ut, tgid);
    up->gen = ++ut->gen;
    qsort(up->m, up->n, sizeof(up->m[0]), by_start);
    return unwind_maps_set_proc(&ut->kernel, tgid, up);
}

/* Takes what build K's child sent; true once it has ended. */
static bool build_ended(struct unwind_tables *ut, int k)
{
    uint64_t age = isolated_build_age_ns(ut->builds[k].ib);
    struct unwind_rows rows;
    int r = isolated_build_poll(ut->builds[k].ib, &rows);
    if (r == 0)
        return false;
    ut->builds[k].ib = NULL;
    struct binary *b = &ut->bins[ut->builds[k].bin_index];
    bool room = r <= 0 || !budget_spent(ut);
    if (!room)
        unwind_rows_free(&rows);
    b->bin = !room ? BIN_LATER : r > 0 ? publish_rows(ut, b, &rows) : BIN_NONE;
    struct owner_share *o = share_of(ut, b->owner);
    if (o) {
        o->build_ns += age;
        o->bytes += b->bin >= 0 ? b->bytes : 0;
        o->tables += b->bin >= 0;
    }
    ut->usage.build_seconds += (double)age / 1e9;
    count_outcome(ut, b);
    return true;
}

void unwind_tables_poll(struct unwind_tables *ut)
{
    if (!ut)
        return;
    bool ended = false;
    for (int k = 0; k < MAX_BUILDS; k++)
        ended |= ut->builds[k].ib && build_ended(ut, k);
    if (!ended)
        return;
    /* The processes that were waiting, published again: they take the new
     * tables, and binaries that waited their turn start. */
    int n = ut->nwaiting, tgids[MAX_WAITING];
    memcpy(tgids, ut->waiting, (size_t)n * sizeof(tgids[0]));
    ut->nwaiting = 0;
    for (int i = 0; i < n; i++) {
        struct pm_proc *p = procmaps_get(ut->maps, tgids[i]);
        if (p && !p->exited)
            publish_process(ut, tgids[i], p);
    }
}

void unwind_tables_build_fds(const struct unwind_tables *ut, int fds[UNWIND_BUILDS])
{
    for (int k = 0; k < MAX_BUILDS; k++)
        fds[k] = ut && ut->builds[k].ib ? isolated_build_fd(ut->builds[k].ib) : -1;
}

void unwind_tables_set_forget_after(struct unwind_tables *ut, uint64_t ns)
{
    ut->forget_after_ns = ns;
}

void unwind_tables_usage(const struct unwind_tables *ut, struct unwind_tables_usage *u)
{
    *u = ut ? ut->usage : (struct unwind_tables_usage){0};
    u->known = ut ? ut->nknown : 0;
    unwind_cache_counts(ut ? ut->cache : NULL, &u->cached, &u->cache_stored);
}

void unwind_tables_print(const struct unwind_tables *ut, FILE *f)
{
    if (!ut)
        return;
    fprintf(f, "parktrace: unwind tables:");
    for (size_t i = 0; i < ut->nbins; i++)
        if (ut->bins[i].bin >= 0 && ut->bins[i].bytes)
            fprintf(f, " %s=%zuKiB", ut->bins[i].name, ut->bins[i].bytes / 1024);
    fputc('\n', f);
}

void unwind_tables_free(struct unwind_tables *ut)
{
    if (!ut)
        return;
    for (int k = 0; k < MAX_BUILDS; k++)
        isolated_build_cancel(ut->builds[k].ib);
    free(ut->bins);
    unwind_cache_close(ut->cache);
    free(ut);
}
