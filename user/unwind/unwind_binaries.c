/* The binaries the unwind tables know: found by inode, made and
 * forgotten within their bounds, each owner's share of builds, tables and
 * memory, and the tables no live process maps let go. */
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
#include "unwind_tables_parts.h"

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
            struct owner_share *o = b->root_only ? NULL : unwind_share_of(ut, b->owner);
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

bool unwind_budget_spent(struct unwind_tables *ut)
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
bool unwind_share_spent(struct unwind_tables *ut, struct owner_share *o)
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
    if (unwind_budget_spent(ut))
        return BIN_LATER;
    size_t n = 0, nrows = 0;
    uint64_t *table = b->key_len ? unwind_cache_load(ut->cache, b->key, b->key_len, &n, &nrows) : NULL;
    if (table)
        return unwind_publish_rows_table(ut, b, table, n, nrows);
    struct unwind_rows rows;
    return unwind_rows_build_ref(f, &rows) ? BIN_NONE : unwind_publish_rows(ut, b, &rows);
}

/* OWNER's share, its build time given back to up to now; NULL when
 * MAX_OWNERS others have theirs. */
struct owner_share *unwind_share_of(struct unwind_tables *ut, uid_t owner)
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

bool unwind_owner_building(const struct unwind_tables *ut, uid_t owner)
{
    for (int k = 0; k < MAX_BUILDS; k++)
        if (ut->builds[k].ib && ut->bins[ut->builds[k].bin_index].owner == owner)
            return true;
    return false;
}

/* Counts B's outcome once it has one. */
void unwind_count_outcome(struct unwind_tables *ut, const struct binary *b)
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
    struct owner_share *o = b->root_only ? NULL : unwind_share_of(ut, b->owner);
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
    struct owner_share *o = root_only ? NULL : unwind_share_of(ut, owner);
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
struct binary *unwind_binary_of(struct unwind_tables *ut, const struct file_ref *f)
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
            o->bin = unwind_start_build(ut, f, i);
        else if (was == BIN_LATER)
            o->bin = o->root_only ? trusted_table(ut, f, o) : unwind_start_build(ut, f, i);
        if (o->bin != was)
            unwind_count_outcome(ut, o);
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
    double t0 = unwind_cpu_s();
    bool cfi = read_loads(f->fd, b->root_only, b);
    b->bin = !cfi ? BIN_NONE : b->root_only ? trusted_table(ut, f, b) : unwind_start_build(ut, f, (size_t)(b - ut->bins));
    unwind_count_outcome(ut, b);
    ut->usage.build_seconds += unwind_cpu_s() - t0;
    return b;
}
