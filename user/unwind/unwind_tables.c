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

static int publish_process(struct unwind_tables *ut, int tgid, struct pm_proc *p);

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
double unwind_cpu_s(void)
{
    return (double)process_cpu_ns() / 1e9;
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
int unwind_publish_rows_table(struct unwind_tables *ut, struct binary *b, uint64_t *table, size_t n, size_t nrows)
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
int unwind_publish_rows(struct unwind_tables *ut, struct binary *b, struct unwind_rows *rows)
{
    size_t n = 0;
    uint64_t *table = unwind_rows_table(rows, &n);
    size_t nrows = rows->n;
    unwind_rows_free(rows);
    if (table && b->key_len)
        unwind_cache_store(ut->cache, b->key, b->key_len, table, n, nrows);
    return unwind_publish_rows_table(ut, b, table, n, nrows);
}

/* Starts a child on the binary at index I, open at F, that a user could
 * have written: BIN_BUILDING, BIN_WAITING when its owner has a child at
 * work or every child is taken, or BIN_LATER when its owner's share or the
 * budget is spent (tried again when a process maps it again). */
int unwind_start_build(struct unwind_tables *ut, const struct file_ref *f, size_t i)
{
    struct binary *b = &ut->bins[i];
    struct owner_share *o = unwind_share_of(ut, b->owner);
    if (!o || o->build_ns >= OWNER_BUILD_NS || unwind_share_spent(ut, o)) {
        ut->usage.owner_refused++;
        return BIN_LATER;
    }
    if (unwind_budget_spent(ut))
        return BIN_LATER;
    if (unwind_owner_building(ut, b->owner))
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
        (b->bin == BIN_WAITING && !unwind_owner_building(ut, b->owner)))
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
            b = f.fd >= 0 ? unwind_binary_of(ut, &f) : NULL;
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
    uint64_t cost = 0;
    struct unwind_rows rows;
    int r = isolated_build_poll(ut->builds[k].ib, &rows, &cost);
    if (r == 0)
        return false;
    ut->builds[k].ib = NULL;
    struct binary *b = &ut->bins[ut->builds[k].bin_index];
    bool room = r <= 0 || !unwind_budget_spent(ut);
    if (!room)
        unwind_rows_free(&rows);
    b->bin = !room ? BIN_LATER : r > 0 ? unwind_publish_rows(ut, b, &rows) : BIN_NONE;
    struct owner_share *o = unwind_share_of(ut, b->owner);
    if (o) {
        o->build_ns += cost;
        o->bytes += b->bin >= 0 ? b->bytes : 0;
        o->tables += b->bin >= 0;
    }
    ut->usage.build_seconds += (double)cost / 1e9;
    unwind_count_outcome(ut, b);
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
    unwind_maps_flush(&ut->kernel);
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
    unwind_maps_flush(&ut->kernel);
    free(ut->bins);
    unwind_cache_close(ut->cache);
    free(ut);
}
