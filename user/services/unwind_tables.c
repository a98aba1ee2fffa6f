#include "unwind_tables.h"

#include <bpf/bpf.h>
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
#include "foreign_elf.h"
#include "monotonic.h"
#include "procmaps.h"
#include "safe_open.h"
#include "unwind_cache.h"
#include "unwind_isolated.h"
#include "unwind_rows.h"

/* A binary, known by its file identity; bin < 0 when it has no usable CFI. */
struct binary {
    uint64_t dev, ino, size, mtime_ns, ctime_ns;   /* a file rewritten or its inode reused is another */
    int bin;
    size_t bytes;             /* its table in the kernel */
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
};

struct unwind_tables {
    struct procmaps *maps;
    struct unwind_cache *cache;
    struct binary *bins;
    size_t nbins, capbins;
    int next_bin;
    int bins_fd, procs_fd;    /* the kernel's maps of tables and of processes */
    struct unwind_tables_usage usage;
    struct pt_uproc up;       /* a process's list, as it is written */
};

/* Kernel memory (locked) for all tables; a binary past it goes without. */
#define TABLE_BUDGET (256u << 20)

struct unwind_tables *unwind_tables_new(int bins_map_fd, int procs_map_fd, const char *cache_dir, struct procmaps *maps)
{
    struct unwind_tables *ut = calloc(1, sizeof(*ut));
    if (!ut)
        return NULL;
    ut->maps = maps;
    ut->bins_fd = bins_map_fd;
    ut->procs_fd = procs_map_fd;
    ut->cache = unwind_cache_open(cache_dir);
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
    LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
    int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pt_unwind_rows", sizeof(uint32_t), sizeof(uint64_t),
                            (uint32_t)n, &opts);
    if (fd < 0)
        return -1;
    size_t len = (n * sizeof(uint64_t) + 4095) & ~(size_t)4095;
    void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) {
        close(fd);
        return -1;
    }
    memcpy(mem, table, n * sizeof(uint64_t));
    munmap(mem, len);
    uint32_t key = (uint32_t)ut->next_bin;
    int err = bpf_map_update_elem(ut->bins_fd, &key, &fd, BPF_ANY);
    close(fd);     /* the outer map holds it now */
    if (err)
        return -1;
    ut->usage.bytes += len;
    *bytes = len;
    return ut->next_bin++;
}

/* A checksum of ELF's CFI sections, as they are in the file. */
static uint32_t cfi_crc(Elf *elf)
{
    size_t shstrndx;
    uLong crc = crc32(0, NULL, 0);
    if (elf_getshdrstrndx(elf, &shstrndx))
        return 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *n;
        Elf_Data *d;
        if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
            (strcmp(n, ".eh_frame") == 0 || strcmp(n, ".eh_frame_hdr") == 0 || strcmp(n, ".debug_frame") == 0) &&
            (d = elf_rawdata(scn, NULL)) && d->d_buf)
            crc = crc32(crc, d->d_buf, (uInt)d->d_size);
    }
    return (uint32_t)crc;
}

/* The loadable segments of the ELF file open at FD, and its key when
 * TRUSTED: only its program headers, notes and CFI bytes are read (symbols
 * are loaded when a stack is named, not here). */
static void read_loads(int fd, bool trusted, struct binary *b)
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
    if (trusted && elf && elf_kind(elf) == ELF_K_ELF && (b->key_len = build_id_read(elf, b->key))) {
        uint32_t crc = cfi_crc(elf);
        memcpy(b->key + b->key_len, &crc, sizeof(crc));
        b->key_len += sizeof(crc);
    }
    if (elf)
        elf_end(elf);
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

/* A binary that only root can have written: its build-id can be believed. */
static bool root_only(const struct stat *st)
{
    return st->st_uid == 0 && !(st->st_mode & 022);
}

/* The table of the binary open at F, built and published the first time:
 * from the cache, from a trusted binary with the same key, or from its CFI.
 * Returns -1 when it has none or the budget is spent. */
static int table_of(struct unwind_tables *ut, const struct file_ref *f, struct binary *b)
{
    for (size_t i = 0; b->key_len && i + 1 < ut->nbins; i++) {
        const struct binary *o = &ut->bins[i];
        if (o->key_len == b->key_len && o->bin >= 0 && memcmp(o->key, b->key, b->key_len) == 0)
            return o->bin;    /* same code, same table */
    }
    if (ut->next_bin >= PT_UNWIND_BINS || ut->usage.bytes >= TABLE_BUDGET) {
        ut->usage.over_budget++;
        return -1;
    }
    size_t n = 0, nrows = 0;
    uint64_t *table = b->key_len ? unwind_cache_load(ut->cache, b->key, b->key_len, &n, &nrows) : NULL;
    if (!table) {
        struct unwind_rows rows;
        if ((b->root_only ? unwind_rows_build_ref(f, &rows) : unwind_rows_build_isolated(f, &rows)) == 0) {
            table = unwind_rows_table(&rows, &n);
            nrows = rows.n;
            unwind_rows_free(&rows);
            if (table && b->key_len)
                unwind_cache_store(ut->cache, b->key, b->key_len, table, n, nrows);
        }
    }
    int bin = -1;
    if (table && n * sizeof(uint64_t) > TABLE_BUDGET - ut->usage.bytes)
        ut->usage.over_budget++;
    else if (table)
        bin = publish_table(ut, table, n, &b->bytes);
    free(table);
    if (bin >= 0)
        ut->usage.rows += nrows;
    return bin;
}

/* The binary open at F; NULL when it cannot be read. */
static struct binary *binary_of(struct unwind_tables *ut, const struct file_ref *f)
{
    struct stat st;
    if (fstat(f->fd, &st))
        return NULL;
    for (size_t i = 0; i < ut->nbins; i++) {
        struct binary *o = &ut->bins[i];
        if (o->dev == st.st_dev && o->ino == st.st_ino && o->size == (uint64_t)st.st_size &&
            o->mtime_ns == timespec_ns(st.st_mtim) && o->ctime_ns == timespec_ns(st.st_ctim))
            return o;
    }
    if (ut->nbins == ut->capbins) {
        size_t cap = ut->capbins ? ut->capbins * 2 : 64;
        struct binary *b = realloc(ut->bins, cap * sizeof(*b));
        if (!b)
            return NULL;
        ut->bins = b;
        ut->capbins = cap;
    }
    struct binary *b = &ut->bins[ut->nbins++];
    *b = (struct binary){.dev = st.st_dev, .ino = st.st_ino, .size = (uint64_t)st.st_size,
                         .mtime_ns = timespec_ns(st.st_mtim), .ctime_ns = timespec_ns(st.st_ctim), .bin = -1};
    const char *slash = strrchr(f->name, '/');
    snprintf(b->name, sizeof(b->name), "%.63s", slash ? slash + 1 : f->name);
    double t0 = now_s();
    b->root_only = root_only(&st);
    read_loads(f->fd, b->root_only, b);
    b->bin = table_of(ut, f, b);
    if (b->bin >= 0)
        ut->usage.binaries++;
    else
        ut->usage.without_cfi++;
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

/* TGID's executable mappings with tables, sorted, into the kernel. */
static int publish_process(struct unwind_tables *ut, int tgid, struct pm_proc *p)
{
    struct pt_uproc *up = &ut->up;
    memset(up, 0, sizeof(*up));
    if (is_jvm(p))
        up->flags |= PT_UPROC_JVM;
    for (int i = 0; i < p->nmaps && up->n < PT_UNWIND_MAPS; i++) {
        struct pm_map *m = &p->maps[i];
        if (!m->exec || !m->path)
            continue;
        struct file_ref f = {.fd = procmaps_open(p, m), .name = m->path, .pid = tgid};
        struct binary *b = f.fd >= 0 ? binary_of(ut, &f) : NULL;
        if (f.fd >= 0)
            close(f.fd);
        uint64_t bias;
        if (!b || b->bin < 0 || !mapping_bias(b, m->start, m->offset, &bias))
            continue;
        up->m[up->n++] = (struct pt_umap){.start = m->start, .end = m->end, .bias = bias, .bin = (uint32_t)b->bin};
    }
    qsort(up->m, up->n, sizeof(up->m[0]), by_start);
    uint32_t key = (uint32_t)tgid;
    return bpf_map_update_elem(ut->procs_fd, &key, up, BPF_ANY) ? -1 : 0;
}

void unwind_tables_usage(const struct unwind_tables *ut, struct unwind_tables_usage *u)
{
    *u = ut ? ut->usage : (struct unwind_tables_usage){0};
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
    free(ut->bins);
    unwind_cache_close(ut->cache);
    free(ut);
}
