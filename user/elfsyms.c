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

#define MAX_FILES 4096

static struct elf_file *files[MAX_FILES];
static int nfiles;
static char debug_root[PATH_MAX] = "/usr/lib/debug";

void elfsyms_set_debug_root(const char *dir)
{
    snprintf(debug_root, sizeof(debug_root), "%s", dir);
}

static const char *keep_string(struct elf_file *ef, const char *s)
{
    size_t n = strlen(s) + 1;
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
    memcpy(ef->strings + ef->strings_len, s, n);
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

/* Adds the FUNC and OBJECT symbols of every symbol table section of TYPE. */
static size_t read_symtab(Elf *elf, struct elf_file *ef, Elf64_Word type, size_t *cap)
{
    Elf_Scn *scn = NULL;
    size_t added = 0;

    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || sh.sh_entsize == 0)
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
            if (ef->nsyms == *cap) {
                *cap = *cap ? *cap * 2 : 1024;
                struct elf_sym *p = realloc(ef->syms, *cap * sizeof(*p));
                if (!p)
                    return added;
                ef->syms = p;
            }
            const char *off = keep_string(ef, name);
            if (!off)
                return added;
            ef->syms[ef->nsyms++] = (struct elf_sym){
                .addr = sym.st_value, .size = sym.st_size, .name = off, .func = t != STT_OBJECT};
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

static Elf_Data *section_data(Elf *elf, const char *want, GElf_Shdr *out)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    if (elf_getshdrstrndx(elf, &shstrndx))
        return NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        if (!gelf_getshdr(scn, out))
            continue;
        const char *name = elf_strptr(elf, shstrndx, out->sh_name);
        if (name && strcmp(name, want) == 0)
            return elf_getdata(scn, NULL);
    }
    return NULL;
}

/* Path of the separate debug file: build-id first, then .gnu_debuglink. */
static bool find_debug_file(Elf *elf, const char *path, char *out, size_t len)
{
    GElf_Shdr sh;
    Elf_Data *d = section_data(elf, ".note.gnu.build-id", &sh);
    if (d && d->d_size > 16) {
        const unsigned char *p = d->d_buf;
        uint32_t namesz = *(const uint32_t *)p, descsz = *(const uint32_t *)(p + 4);
        size_t desc = 12 + ((namesz + 3) & ~3u);
        if (desc + descsz <= d->d_size && descsz > 1 && descsz <= 64) {
            char hex[130];
            for (uint32_t i = 0; i < descsz; i++)
                sprintf(hex + 2 * i, "%02x", p[desc + i]);
            if (snprintf(out, len, "%s/.build-id/%.2s/%s.debug", debug_root, hex, hex + 2) <
                    (int)len &&
                access(out, R_OK) == 0)
                return true;
        }
    }
    d = section_data(elf, ".gnu_debuglink", &sh);
    if (d && d->d_size > 1 && memchr(d->d_buf, 0, d->d_size)) {
        const char *link = d->d_buf, *slash = strrchr(path, '/');
        int dirlen = slash ? (int)(slash - path) : 0;
        if (snprintf(out, len, "%s/%.*s/%s", debug_root, dirlen, path, link) < (int)len &&
            access(out, R_OK) == 0)
            return true;
        if (snprintf(out, len, "%.*s/.debug/%s", dirlen, path, link) < (int)len &&
            access(out, R_OK) == 0)
            return true;
    }
    return false;
}

static void add_debug_symbols(struct elf_file *ef, Elf *elf, const char *path, size_t *cap)
{
    char dbg[PATH_MAX];
    if (!find_debug_file(elf, path, dbg, sizeof(dbg)))
        return;
    int fd = open(dbg, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    Elf *delf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (delf) {
        read_symtab(delf, ef, SHT_SYMTAB, cap);
        elf_end(delf);
    }
    close(fd);
}

static struct elf_file *load(const char *path, const struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
        if (elf)
            elf_end(elf);
        close(fd);
        return NULL;
    }
    struct elf_file *ef = calloc(1, sizeof(*ef));
    ef->dev = st->st_dev;
    ef->ino = st->st_ino;
    ef->path = strdup(path);
    ef->is_dyn = eh.e_type == ET_DYN;

    size_t nph;
    if (!elf_getphdrnum(elf, &nph) && nph) {
        ef->loads = calloc(nph, sizeof(*ef->loads));
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
                ef->loads[ef->nloads++] = (struct elf_load){ph.p_offset, ph.p_vaddr, ph.p_filesz,
                                                            ph.p_memsz};
        }
    }
    size_t cap = 0;
    bool full = has_section(elf, SHT_SYMTAB);
    read_symtab(elf, ef, SHT_SYMTAB, &cap);
    read_symtab(elf, ef, SHT_DYNSYM, &cap);
    if (!full)
        add_debug_symbols(ef, elf, path, &cap);
    elf_end(elf);
    close(fd);

    for (size_t i = 0; i < ef->nsyms; i++)
        ef->syms[i].name = ef->strings + (uintptr_t)ef->syms[i].name - 1;
    qsort(ef->syms, ef->nsyms, sizeof(*ef->syms), sym_cmp);
    return ef;
}

struct elf_file *elfsyms_get(const char *path)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode))
        return NULL;
    for (int i = 0; i < nfiles; i++)
        if (files[i]->dev == st.st_dev && files[i]->ino == st.st_ino)
            return files[i];
    if (nfiles == MAX_FILES)
        return NULL;
    static bool inited;
    if (!inited) {
        elf_version(EV_CURRENT);
        inited = true;
    }
    struct elf_file *ef = load(path, &st);
    if (ef)
        files[nfiles++] = ef;
    return ef;
}

const struct elf_sym *elfsyms_lookup(const struct elf_file *ef, uint64_t vaddr, bool func)
{
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

void elfsyms_free_all(void)
{
    for (int i = 0; i < nfiles; i++) {
        free(files[i]->path);
        free(files[i]->loads);
        free(files[i]->syms);
        free(files[i]->strings);
        free(files[i]);
    }
    nfiles = 0;
}
