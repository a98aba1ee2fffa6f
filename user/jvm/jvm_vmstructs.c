#include "jvm_vmstructs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfsyms.h"
#include "procmaps.h"
#include "procstatus.h"

/* Every number below comes from another process's memory: each is bounded,
 * and a table or list that keeps failing to read is given up on. */
#define MAX_ENTRIES 8192     /* JDK 17 has about 800; a bound against garbage */
#define MAX_BAD_NAMES 64     /* a real table has none */
#define TABLE_CHUNK 32       /* entries per read */
#define MAX_THREADS 65536
/* A JavaThread is an OS thread: a list longer than the process's threads
 * (plus a few that started or ended while it was read) is not believed. */
#define THREAD_SLACK 64
#define MAX_BAD_THREADS 16
/* Reads of a thread list that keeps being replaced before it is given up
 * for this refresh. */
#define THREAD_LIST_READS 4

static int fail(struct jvm *j, const char *what)
{
    snprintf(j->error, sizeof(j->error), "JVM %d: %s", j->pid, what);
    return -2;
}

/* The runtime address of an exported libjvm symbol. */
static bool symbol(const struct jvm *j, const struct elf_file *ef, const char *name, uint64_t *addr)
{
    const struct elf_sym *s = elfsyms_find(ef, name);
    if (!s)
        return false;
    *addr = s->addr + j->bias;
    return true;
}

/* Reads the value of an exported uint64_t (or pointer) variable. */
static bool symbol_u64(const struct jvm *j, const struct elf_file *ef, const char *name, uint64_t *v)
{
    uint64_t addr;
    return symbol(j, ef, name, &addr) && procmem_u64(&j->mem, addr, v);
}

static char *read_name(const struct jvm *j, uint64_t addr)
{
    char buf[128];
    return addr && procmem_string(&j->mem, addr, buf, sizeof(buf)) ? strdup(buf) : NULL;
}

/* Entry I of a table of STRIDE-byte entries at TABLE, read CHUNK entries at
 * a time (one pread each, not one per entry); the last chunk may run past
 * the table's mapping, so a failed chunk falls back to single entries. */
struct table_reader {
    const struct jvm *j;
    uint64_t table, stride;
    uint8_t buf[TABLE_CHUNK * 256];
    int first, count;     /* the entries in buf */
};

static const uint8_t *table_entry(struct table_reader *r, int i)
{
    if (i < r->first || i >= r->first + r->count) {
        uint64_t at = r->table + (uint64_t)i * r->stride;
        r->first = i;
        r->count = procmem_read(&r->j->mem, at, r->buf, TABLE_CHUNK * r->stride) ? TABLE_CHUNK
                 : procmem_read(&r->j->mem, at, r->buf, r->stride) ? 1 : 0;
        if (!r->count)
            return NULL;
    }
    return r->buf + (uint64_t)(i - r->first) * r->stride;
}

static int read_table(struct jvm *j, const struct elf_file *ef)
{
    uint64_t table, stride, o_type, o_field, o_static, o_offset, o_address;
    if (!symbol_u64(j, ef, "gHotSpotVMStructs", &table) ||
        !symbol_u64(j, ef, "gHotSpotVMStructEntryArrayStride", &stride) ||
        !symbol_u64(j, ef, "gHotSpotVMStructEntryTypeNameOffset", &o_type) ||
        !symbol_u64(j, ef, "gHotSpotVMStructEntryFieldNameOffset", &o_field) ||
        !symbol_u64(j, ef, "gHotSpotVMStructEntryIsStaticOffset", &o_static) ||
        !symbol_u64(j, ef, "gHotSpotVMStructEntryOffsetOffset", &o_offset) ||
        !symbol_u64(j, ef, "gHotSpotVMStructEntryAddressOffset", &o_address))
        return fail(j, "libjvm exports no readable vmStructs table (gHotSpotVMStructs)");
    /* libjvm mapped but not yet relocated (the loader is still at it): the
     * table's pointer still reads 0. Relocated but its C++ static
     * initializers not yet run: the stride (STRIDE(), no constant) still
     * reads 0 (a Jetty JVM read then was given up and its parks stayed
     * futex waits). A JVM still starting, not a bad one. */
    if (!table || !stride)
        return 1;
    /* Compared without adding to them: an offset near 2^64 must not wrap into range. */
    if (stride < 8 || stride > 256 || o_type > stride - 8 || o_field > stride - 8 ||
        o_static > stride - 4 || o_offset > stride - 8 || o_address > stride - 8)
        return fail(j, "vmStructs table has an unexpected shape");
    struct table_reader r = {.j = j, .table = table, .stride = stride};   /* 8 KiB */
    int bad_names = 0;
    j->fields = calloc(MAX_ENTRIES, sizeof(*j->fields));
    if (!j->fields)
        return fail(j, "out of memory");
    for (int i = 0; i < MAX_ENTRIES; i++) {
        const uint8_t *entry = table_entry(&r, i);
        if (!entry) {
            /* A JVM starting: its table's pages not all there yet (CI lost
             * a JVM so, twice): looked at again until its last chance. */
            fail(j, "cannot read the vmStructs table");
            return 1;
        }
        uint64_t type, field, offset, address;
        int32_t is_static;
        memcpy(&type, entry + o_type, 8);
        memcpy(&field, entry + o_field, 8);
        memcpy(&is_static, entry + o_static, 4);
        memcpy(&offset, entry + o_offset, 8);
        memcpy(&address, entry + o_address, 8);
        if (!type)
            return 0;     /* the terminating entry */
        struct vm_field *f = &j->fields[j->nfields];
        f->type = read_name(j, type);
        f->field = read_name(j, field);
        if (!f->type || !f->field) {
            free(f->type);
            free(f->field);
            f->type = f->field = NULL;
            if (++bad_names == MAX_BAD_NAMES)
                return fail(j, "vmStructs table names unreadable memory");
            continue;
        }
        f->is_static = is_static != 0;
        f->offset = offset;
        f->address = address;
        j->nfields++;
    }
    return fail(j, "vmStructs table has no end");
}

static int read_types(struct jvm *j, const struct elf_file *ef)
{
    uint64_t table, stride, o_name, o_super, o_size;
    if (!symbol_u64(j, ef, "gHotSpotVMTypes", &table) ||
        !symbol_u64(j, ef, "gHotSpotVMTypeEntryArrayStride", &stride) ||
        !symbol_u64(j, ef, "gHotSpotVMTypeEntryTypeNameOffset", &o_name) ||
        !symbol_u64(j, ef, "gHotSpotVMTypeEntrySuperclassNameOffset", &o_super) ||
        !symbol_u64(j, ef, "gHotSpotVMTypeEntrySizeOffset", &o_size))
        return fail(j, "libjvm exports no readable vmTypes table (gHotSpotVMTypes)");
    if (!table || !stride)
        return 1;   /* not yet relocated or initialized, as for vmStructs */
    if (stride < 8 || stride > 256 || o_name > stride - 8 || o_super > stride - 8 ||
        o_size > stride - 8)
        return fail(j, "vmTypes table has an unexpected shape");
    struct table_reader r = {.j = j, .table = table, .stride = stride};   /* 8 KiB */
    int bad_names = 0;
    j->types = calloc(MAX_ENTRIES, sizeof(*j->types));
    if (!j->types)
        return fail(j, "out of memory");
    for (int i = 0; i < MAX_ENTRIES; i++) {
        uint64_t name, super, size;
        const uint8_t *entry = table_entry(&r, i);
        if (!entry)
            return fail(j, "cannot read the vmTypes table");
        memcpy(&name, entry + o_name, 8);
        memcpy(&super, entry + o_super, 8);
        memcpy(&size, entry + o_size, 8);
        if (!name)
            return 0;
        struct vm_type *t = &j->types[j->ntypes];
        if (!(t->name = read_name(j, name))) {
            if (++bad_names == MAX_BAD_NAMES)
                return fail(j, "vmTypes table names unreadable memory");
            continue;
        }
        t->super = read_name(j, super);
        t->size = size;
        j->ntypes++;
    }
    return fail(j, "vmTypes table has no end");
}

static bool is_libjvm(const char *path)
{
    const char *base = path ? strrchr(path, '/') : NULL;
    return base && strcmp(base, "/libjvm.so") == 0;
}

static bool maps_libjvm_cached(const struct pm_proc *p)
{
    for (int i = 0; i < p->nmaps; i++)
        if (is_libjvm(p->maps[i].path))
            return true;
    return false;
}

int jvm_open(struct jvm *j, struct procmaps *maps, int pid)
{
    memset(j, 0, sizeof(*j));
    j->pid = pid;
    j->mem.fd = -1;
    struct pm_proc *p = procmaps_get(maps, pid);
    struct elf_file *ef = NULL;
    /* Maps cached before the process exec'd java lack libjvm: read again,
     * whatever rereads they had (a refresh over its budget left a JVM
     * started by a shell `futex` waits for good). */
    if (!maps_libjvm_cached(p))
        procmaps_reread(p);
    for (int i = 0; i < p->nmaps && !ef; i++) {
        struct pm_map *m = &p->maps[i];
        if (!is_libjvm(m->path))
            continue;
        snprintf(j->libjvm, sizeof(j->libjvm), "%s", m->path);
        if ((ef = procmaps_elf(p, m))) {
            j->bias = m->bias;
            j->elf = ef;
            elfsyms_hold(ef);     /* the process's maps may be let go first */
            j->libjvm_at = m->start;
        }
    }
    if (!j->libjvm[0]) {
        fail(j, "no libjvm.so in its maps");
        return -1;
    }
    if (procstatus_start_time(pid, &j->start_time) != 0)
        return fail(j, "exited");
    if (!ef)
        return fail(j, "cannot read libjvm.so");
    if (procmem_open(&j->mem, pid))
        return fail(j, "cannot read its memory (/proc/PID/mem)");
    int rc = read_table(j, ef);
    return rc ? rc : read_types(j, ef);
}

void jvm_close(struct jvm *j)
{
    for (int i = 0; i < j->nfields; i++) {
        free(j->fields[i].type);
        free(j->fields[i].field);
    }
    free(j->fields);
    for (int i = 0; i < j->ntypes; i++) {
        free(j->types[i].name);
        free(j->types[i].super);
    }
    free(j->types);
    procmem_close(&j->mem);
    elfsyms_release(j->elf);
    memset(j, 0, sizeof(*j));
    j->mem.fd = -1;
}

static const struct vm_field *find(const struct jvm *j, const char *type, const char *field)
{
    for (int i = 0; i < j->nfields; i++)
        if (strcmp(j->fields[i].type, type) == 0 && strcmp(j->fields[i].field, field) == 0)
            return &j->fields[i];
    return NULL;
}

bool jvm_type_size(const struct jvm *j, const char *type, uint64_t *size)
{
    for (int i = 0; i < j->ntypes; i++)
        if (strcmp(j->types[i].name, type) == 0) {
            *size = j->types[i].size;
            return *size > 0;
        }
    return false;
}

bool jvm_offset(const struct jvm *j, const char *type, const char *field, uint64_t *offset)
{
    const struct vm_field *f = find(j, type, field);
    if (!f || f->is_static)
        return false;
    *offset = f->offset;
    return true;
}

bool jvm_static(const struct jvm *j, const char *type, const char *field, uint64_t *address)
{
    const struct vm_field *f = find(j, type, field);
    if (!f || !f->is_static)
        return false;
    *address = f->address;
    return true;
}

uint64_t jvm_symbol(const struct jvm *j, const char *name)
{
    uint64_t addr;
    return j->elf && symbol(j, j->elf, name, &addr) ? addr : 0;
}

bool jvm_flag(const struct jvm *j, const char *name, bool *v)
{
    uint64_t addr = jvm_symbol(j, name);
    uint8_t b;
    if (!addr || !procmem_read(&j->mem, addr, &b, 1))
        return false;
    *v = b != 0;
    return true;
}

struct thread_list_offsets {
    uint64_t list_var, len_off, threads_off, osthread_off, tid_off;
};

/* One read of LIST, a ThreadsList the JVM published: its threads and tids,
 * or -1 if they cannot be believed. */
static int read_thread_list(const struct jvm *j, const struct thread_list_offsets *o, uint64_t list, int *tids,
                            uint64_t *threads, int max)
{
    uint64_t array;
    uint32_t len;
    int os_threads = procstatus_threads(j->pid);
    if (!procmem_read(&j->mem, list + o->len_off, &len, 4) || !procmem_u64(&j->mem, list + o->threads_off, &array) ||
        len > MAX_THREADS || os_threads < 0 || len > (uint32_t)os_threads + THREAD_SLACK)
        return -1;
    if (len > (uint32_t)max)
        len = (uint32_t)max;
    /* The array in one read into THREADS, not one read per entry; kept
     * entries move down over it (n <= i). */
    if (len && !procmem_read(&j->mem, array, threads, 8ULL * len))
        return -1;
    int n = 0, bad = 0;
    for (uint32_t i = 0; i < len; i++) {
        uint64_t thread = threads[i], osthread;
        int32_t tid;
        if (procmem_u64(&j->mem, thread + o->osthread_off, &osthread) &&
            procmem_read(&j->mem, osthread + o->tid_off, &tid, 4) && tid > 0) {
            threads[n] = thread;
            tids[n++] = tid;
        } else if (++bad == MAX_BAD_THREADS) {
            return -1;   /* a live JVM's list points at live threads */
        }
    }
    return n;
}

int jvm_java_threads(const struct jvm *j, int *tids, uint64_t *threads, int max)
{
    struct thread_list_offsets o;
    if (!jvm_static(j, "ThreadsSMRSupport", "_java_thread_list", &o.list_var) ||
        !jvm_offset(j, "ThreadsList", "_length", &o.len_off) ||
        !jvm_offset(j, "ThreadsList", "_threads", &o.threads_off) ||
        !jvm_offset(j, "JavaThread", "_osthread", &o.osthread_off) ||
        !jvm_offset(j, "OSThread", "_thread_id", &o.tid_off))
        return -1;
    /* The JVM publishes a new list at every thread's start and end and
     * frees the old one once no thread of its own holds it; we hold none,
     * so a list replaced while it was read may have been freed under the
     * read: read again while the published list moves. (Its memory may be
     * reused for the next list at once, so an unmoved pointer is no proof:
     * the caller gives a JVM up only after failures in a row.) */
    uint64_t list, after;
    if (!procmem_u64(&j->mem, o.list_var, &list))
        return -1;
    for (int attempt = 0; attempt < THREAD_LIST_READS; attempt++) {
        if (!list)
            return 0;   /* the JVM is still starting */
        int n = read_thread_list(j, &o, list, tids, threads, max);
        if (!procmem_u64(&j->mem, o.list_var, &after))
            return -1;
        if (after == list)
            return n;
        list = after;
    }
    return -1;
}
