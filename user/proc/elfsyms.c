#include "elfsyms.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debug_file.h"
#include "foreign_elf.h"
#include "go_pclntab.h"

/* Symbol memory a run keeps (symbols and names); past it, the symbols of
 * the file used longest ago are dropped and read again if it is needed
 * again. A user mapping thousands of files cannot leave a later process
 * unnamed. */
#define SYMBOL_BUDGET (256u << 20)
/* What one file may take of it, checked while reading: a file of 8 000
 * symbols that all name one 64 KiB string cost 541 MB before (issue 39). */
#define FILE_SYMBOL_BUDGET (SYMBOL_BUDGET / 4)
/* A name is kept to this many bytes (a C++ template's can be long). */
#define NAME_KEPT 1024
/* Files other users can write, of ELFSYMS_MAX_FILES: the rest stays for
 * root's, which every process maps. */
#define USER_FILES (ELFSYMS_MAX_FILES / 2)
/* Loadable segments kept per file (a linker writes 2 to 5). */
#define LOADS_KEPT 16
#define FILE_BUCKETS 4096

struct elfsyms {
    struct elf_file **files;  /* every file known, in no order */
    size_t nfiles, capfiles, user_files;
    struct elf_file *buckets[FILE_BUCKETS];   /* the same, by inode */
    size_t symbol_bytes, symbols_evicted, refused;
    uint64_t use_clock;
};

struct elfsyms *elfsyms_new(void)
{
    elf_version(EV_CURRENT);   /* libelf's one setting: the same each time */
    return calloc(1, sizeof(struct elfsyms));
}

void elfsyms_set_debug_root(const char *dir)
{
    debug_file_set_root(dir);
}

static const char *keep_string(struct elf_file *ef, const char *s)
{
    size_t n = strnlen(s, NAME_KEPT - 1) + 1;
    if (ef->strings_len + n > ef->strings_cap) {
        /* Offsets, not pointers, until the table is complete: see fixup. */
        size_t cap = ef->strings_cap ? ef->strings_cap * 2 : 65536;
        while (cap < ef->strings_len + n)
            cap *= 2;
        char *p = realloc(ef->strings, cap);
        if (!p)
            return NULL;
        ef->strings = p;
        ef->strings_cap = cap;
    }
    memcpy(ef->strings + ef->strings_len, s, n - 1);
    ef->strings[ef->strings_len + n - 1] = '\0';
    ef->strings_len += n;
    /* Offset + 1, so that 0 stays free to mean failure. */
    return (const char *)(uintptr_t)(ef->strings_len - n + 1);
}

static int sym_cmp(const void *a, const void *b)
{
    const struct elf_sym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* Prefer sized symbols, then global-looking names without a leading _. */
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return 0;
}

/* Adds one symbol to EF (*CAP: its array's room); false when the file's
 * budget or memory is spent. */
static bool add_symbol(struct elf_file *ef, const char *name, uint64_t addr, uint64_t size, bool func, size_t *cap)
{
    if (ef->nsyms * sizeof(*ef->syms) + ef->strings_len > FILE_SYMBOL_BUDGET)
        return false;
    if (ef->nsyms == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        struct elf_sym *p = realloc(ef->syms, *cap * sizeof(*p));
        if (!p)
            return false;
        ef->syms = p;
    }
    const char *off = keep_string(ef, name);
    if (!off)
        return false;
    ef->syms[ef->nsyms++] = (struct elf_sym){.addr = addr, .size = size, .name = off, .func = func};
    return true;
}

/* Adds the FUNC and OBJECT symbols of every symbol table section of TYPE. */
static size_t read_symtab(Elf *elf, struct elf_file *ef, Elf64_Word type, size_t *cap)
{
    Elf_Scn *scn = NULL;
    size_t added = 0;

    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh, strs;
        Elf_Scn *names = NULL;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || sh.sh_entsize == 0)
            continue;
        /* Read whole when asked for: sizes checked before (a file's
         * headers can claim anything up to its length). */
        if (sh.sh_size > FILE_SYMBOL_BUDGET || !(names = elf_getscn(elf, sh.sh_link)) ||
            !gelf_getshdr(names, &strs) || strs.sh_size > FILE_SYMBOL_BUDGET)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data)
            continue;
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, (int)i, &sym))
                continue;
            int t = GELF_ST_TYPE(sym.st_info);
            if ((t != STT_FUNC && t != STT_OBJECT && t != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
                sym.st_value == 0)
                continue;
            const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
            if (!name || !*name)
                continue;
            if (!add_symbol(ef, name, sym.st_value, sym.st_size, t != STT_OBJECT, cap))
                return added;     /* what fits is kept; names are in order of the table */
            added++;
        }
    }
    return added;
}

static bool has_section(Elf *elf, Elf64_Word type)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn)))
        if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
            return true;
    return false;
}

static bool has_symtab(Elf *dbg)
{
    return has_section(dbg, SHT_SYMTAB);
}

static size_t add_debug_symbols(struct elf_file *ef, Elf *elf, const struct file_ref *f, size_t *cap)
{
    int fd;
    Elf *delf = debug_file_open(elf, f, has_symtab, &fd);
    if (!delf)
        return 0;
    size_t added = read_symtab(delf, ef, SHT_SYMTAB, cap);
    elf_end(delf);
    close(fd);
    return added;
}

struct pclntab_read {
    struct elf_file *ef;
    size_t *cap;
};

static bool add_go_function(const char *name, uint64_t addr, uint64_t size, void *arg)
{
    struct pclntab_read *r = arg;
    return add_symbol(r->ef, name, addr, size, true, r->cap);
}

/* A stripped Go program's functions, from the table its runtime keeps
 * (go_pclntab.h). */
static void add_go_functions(struct elf_file *ef, Elf *elf, size_t *cap)
{
    struct pclntab_read r = {ef, cap};
    go_pclntab_walk_elf(elf, NAME_KEPT - 1, add_go_function, &r);
}

static size_t symbols_size(const struct elf_file *ef)
{
    return ef->nsyms * sizeof(*ef->syms) + ef->strings_cap;
}

static void free_symbols(struct elf_file *ef)
{
    ef->owner->symbol_bytes -= symbols_size(ef);
    free(ef->syms);
    free(ef->strings);
    ef->syms = NULL;
    ef->strings = NULL;
    ef->nsyms = ef->strings_len = ef->strings_cap = 0;
}

static void drop_symbols(struct elf_file *ef)
{
    free_symbols(ef);
    ef->evicted = true;
    ef->owner->symbols_evicted++;
}

/* Frees symbol memory, the least recently used files' first (never
 * KEEP's, just read), until what is held fits in the budget. */
static void make_room(struct elfsyms *es, const struct elf_file *keep)
{
    while (es->symbol_bytes > SYMBOL_BUDGET) {
        struct elf_file *old = NULL;
        for (size_t i = 0; i < es->nfiles; i++) {
            struct elf_file *f = es->files[i];
            if (f != keep && f->nsyms && (!old || f->last_use < old->last_use))
                old = f;
        }
        if (!old)
            return;
        drop_symbols(old);
    }
}

/* Reads the symbols of ELF (and of its debug file) into EF. */
static void read_symbols(struct elf_file *ef, Elf *elf, const struct file_ref *f)
{
    size_t cap = 0;
    bool full = has_section(elf, SHT_SYMTAB);
    read_symtab(elf, ef, SHT_SYMTAB, &cap);
    read_symtab(elf, ef, SHT_DYNSYM, &cap);
    if (!full && !add_debug_symbols(ef, elf, f, &cap))
        add_go_functions(ef, elf, &cap);
    for (size_t i = 0; i < ef->nsyms; i++)
        ef->syms[i].name = ef->strings + (uintptr_t)ef->syms[i].name - 1;
    if (ef->nsyms)     /* qsort(NULL, 0) is undefined (fuzz: elfsyms-no-symbols) */
        qsort(ef->syms, ef->nsyms, sizeof(*ef->syms), sym_cmp);
    ef->evicted = false;
    ef->owner->symbol_bytes += symbols_size(ef);
    make_room(ef->owner, ef);
}

/* The file's own record, without its symbols: in the budget too. */
static size_t record_size(const struct elf_file *ef)
{
    return sizeof(*ef) + (size_t)ef->nloads * sizeof(*ef->loads);
}

static void read_loads(struct elf_file *ef, Elf *elf)
{
    size_t nph;
    if (elf_getphdrnum(elf, &nph) || !nph)
        return;
    /* A header can claim 65 535 segments: only LOADS_KEPT are kept. */
    struct elf_load loads[LOADS_KEPT];
    int n = 0;
    for (size_t i = 0; i < nph && n < LOADS_KEPT; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
            loads[n++] = (struct elf_load){ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz};
    }
    if (n && (ef->loads = malloc((size_t)n * sizeof(*ef->loads)))) {
        memcpy(ef->loads, loads, (size_t)n * sizeof(*ef->loads));
        ef->nloads = n;
    }
}

static size_t bucket_of(const struct file_id *id)
{
    return (size_t)(inode_hash(id->dev, id->ino) % FILE_BUCKETS);
}

static struct elf_file *find_file(const struct elfsyms *es, const struct file_id *id)
{
    for (struct elf_file *ef = es->buckets[bucket_of(id)]; ef; ef = ef->next)
        if (file_id_same_inode(&ef->id, id))
            return ef;
    return NULL;
}

static void free_file(struct elfsyms *es, struct elf_file *ef)
{
    struct elf_file **link = &es->buckets[bucket_of(&ef->id)];
    while (*link != ef)
        link = &(*link)->next;
    *link = ef->next;
    es->files[ef->slot] = es->files[--es->nfiles];
    es->files[ef->slot]->slot = ef->slot;
    es->user_files -= ef->user_written;
    free_symbols(ef);
    es->symbol_bytes -= record_size(ef);
    free(ef->loads);
    free(ef);
}

/* Forgets the files no one holds (of other users only, when USERS), to
 * make room for one more. */
static void forget_unheld(struct elfsyms *es, bool users)
{
    for (size_t i = es->nfiles; i-- > 0;) {
        struct elf_file *ef = es->files[i];
        if (!ef->holds && (!users || ef->user_written))
            free_file(es, ef);
    }
}

/* Whether a file of that kind may be added, once unheld ones are gone. */
static bool room_for_file(struct elfsyms *es, bool user_written)
{
    bool full = es->nfiles >= ELFSYMS_MAX_FILES, user_full = user_written && es->user_files >= USER_FILES;
    if (full || user_full)
        forget_unheld(es, !full);
    if (es->nfiles < ELFSYMS_MAX_FILES && !(user_written && es->user_files >= USER_FILES))
        return true;
    es->refused++;
    return false;
}

void elfsyms_hold(struct elf_file *ef)
{
    if (ef)
        ef->holds++;
}

void elfsyms_release(struct elf_file *ef)
{
    if (ef && ef->holds)
        ef->holds--;
}

/* EF's inode now holds other contents: what was read of it goes, and it is
 * read again as a new file, in the same elf_file (callers keep pointers). */
static void forget_contents(struct elf_file *ef, const struct file_id *id, Elf *elf)
{
    free_symbols(ef);
    ef->owner->symbol_bytes -= record_size(ef);
    free(ef->loads);
    ef->loads = NULL;
    ef->nloads = 0;
    ef->cfi_checked = ef->cfi_ok = false;
    GElf_Ehdr eh;
    ef->is_dyn = gelf_getehdr(elf, &eh) && eh.e_type == ET_DYN;
    read_loads(ef, elf);
    ef->owner->symbol_bytes += record_size(ef);
    ef->id = *id;     /* the same inode: its bucket stays */
}

static struct elf_file *new_file(struct elfsyms *es, const struct file_id *id, bool user_written, Elf *elf)
{
    if (!room_for_file(es, user_written))
        return NULL;
    if (es->nfiles == es->capfiles) {
        size_t cap = es->capfiles ? es->capfiles * 2 : 256;
        struct elf_file **p = realloc(es->files, cap * sizeof(*p));
        if (!p)
            return NULL;
        es->files = p;
        es->capfiles = cap;
    }
    GElf_Ehdr eh;
    struct elf_file *ef = calloc(1, sizeof(*ef));
    if (!ef || !gelf_getehdr(elf, &eh)) {
        free(ef);
        return NULL;
    }
    ef->owner = es;
    ef->id = *id;
    ef->user_written = user_written;
    ef->is_dyn = eh.e_type == ET_DYN;
    read_loads(ef, elf);
    es->symbol_bytes += record_size(ef);
    es->user_files += user_written;
    ef->slot = es->nfiles;
    es->files[es->nfiles++] = ef;
    size_t b = bucket_of(id);
    ef->next = es->buckets[b];
    es->buckets[b] = ef;
    return ef;
}

struct elf_file *elfsyms_get(struct elfsyms *es, const struct file_ref *f)
{
    struct stat st;
    if (fstat(f->fd, &st) || !S_ISREG(st.st_mode))
        return NULL;
    struct file_id id = file_id_of(&st);
    struct elf_file *ef = find_file(es, &id);
    bool changed = ef && !file_id_equal(&ef->id, &id);
    if (ef && !ef->evicted && !changed)
        return ef;
    Elf *elf = foreign_elf_begin(f->fd);
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        elf_end(elf);
        return changed ? NULL : ef;
    }
    if (changed)
        forget_contents(ef, &id, elf);
    if (ef || (ef = new_file(es, &id, !foreign_elf_root_only(&st), elf)))
        read_symbols(ef, elf, f);
    elf_end(elf);
    return ef;
}

void elfsyms_usage(const struct elfsyms *es, struct elfsyms_usage *u)
{
    *u = (struct elfsyms_usage){
        .bytes = es->symbol_bytes, .evicted = es->symbols_evicted, .files = es->nfiles, .refused = es->refused};
}

bool elfsyms_evicted(const struct elf_file *ef)
{
    return ef->evicted;
}

struct elf_file *elfsyms_get_path(struct elfsyms *es, const char *path)
{
    struct file_ref f = {.fd = safe_open(path), .name = path};
    if (f.fd < 0)
        return NULL;
    struct elf_file *ef = elfsyms_get(es, &f);
    close(f.fd);
    return ef;
}

const struct elf_sym *elfsyms_lookup(struct elf_file *ef, uint64_t vaddr, bool func)
{
    ef->last_use = ++ef->owner->use_clock;
    size_t lo = 0, hi = ef->nsyms;
    /* Last symbol with addr <= vaddr. */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ef->syms[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Walk back over symbols at lower addresses that may still cover vaddr
     * (aliases, nested objects); a few steps suffice in practice. */
    for (size_t i = lo, steps = 0; i > 0 && steps < 16; i--, steps++) {
        const struct elf_sym *s = &ef->syms[i - 1];
        if (s->func != func)
            continue;
        if (vaddr < s->addr + (s->size ? s->size : 1))
            return s;
        if (s->size)
            break;
    }
    return NULL;
}

const struct elf_sym *elfsyms_find(const struct elf_file *ef, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < ef->nsyms; i++) {
        const char *s = ef->syms[i].name;
        if (strncmp(s, name, n) == 0 && (s[n] == '\0' || s[n] == '@'))
            return &ef->syms[i];
    }
    return NULL;
}

bool elfsyms_offset_to_vaddr(const struct elf_file *ef, uint64_t off, uint64_t *vaddr)
{
    for (int i = 0; i < ef->nloads; i++) {
        const struct elf_load *l = &ef->loads[i];
        /* Mappings start page-aligned, possibly below the segment's offset. */
        if (off >= (l->offset & ~0xfffULL) && off < l->offset + (l->filesz ? l->filesz : 1)) {
            *vaddr = off - l->offset + l->vaddr;
            return true;
        }
    }
    return false;
}

void elfsyms_free(struct elfsyms *es)
{
    if (!es)
        return;
    while (es->nfiles)
        free_file(es, es->files[0]);
    free(es->files);
    free(es);
}
