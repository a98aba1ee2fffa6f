/* Go's function table read from outside (go_pclntab.h). Its layout, as
 * Go 1.18 to 1.2x write it on a 64-bit machine: a header of eight words
 * after the magic (functions, files, the text's address, then offsets of
 * the name table, the compile units, the files, the pc tables and the
 * function table), a function table of (entry, record) offset pairs, one
 * pair more for the end of the text, and per function a record whose
 * second word is its name's offset in the name table. */
#include "go_pclntab.h"

#include <string.h>

#include "foreign_elf.h"

#define PCLN_HEADER 72
#define PCLN_BYTES_MAX (256ull << 20)   /* a large program's table is 30 MiB */
#define PCLN_FUNCS_MAX 10000000   /* a large program has a few hundred thousand */

static uint32_t u32_at(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static uint64_t u64_at(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

long go_pclntab_walk(const unsigned char *tab, size_t len, uint64_t text_start, size_t name_max, go_func_fn fn,
                     void *arg)
{
    if (len < PCLN_HEADER)
        return -1;
    uint32_t magic = u32_at(tab);
    if ((magic != 0xfffffff0 && magic != 0xfffffff1) || tab[4] || tab[5] || tab[7] != 8)
        return -1;
    uint64_t nfunc = u64_at(tab + 8), text = u64_at(tab + 24);
    uint64_t names = u64_at(tab + 32), functab = u64_at(tab + 64);
    if (nfunc == 0 || nfunc > PCLN_FUNCS_MAX || names >= len || functab >= len ||
        (len - functab) / 8 < nfunc + 1)
        return -1;
    if (text == 0)
        text = text_start;
    long given = 0;
    for (uint64_t i = 0; i < nfunc; i++) {
        const unsigned char *pair = tab + functab + 8 * i;
        uint32_t entry = u32_at(pair), record = u32_at(pair + 4), end = u32_at(pair + 8);
        if (record >= len - functab || len - functab - record < 8)
            continue;
        int32_t name_off;
        memcpy(&name_off, tab + functab + record + 4, sizeof(name_off));
        if (name_off < 0 || (uint64_t)name_off >= len - names)
            continue;
        const char *name = (const char *)tab + names + name_off;
        size_t room = len - names - (size_t)name_off;
        if (!memchr(name, '\0', room < name_max + 1 ? room : name_max + 1) || !*name)
            continue;
        given++;
        if (!fn(name, text + entry, end > entry ? end - entry : 0, arg))
            break;
    }
    return given;
}

long go_pclntab_walk_elf(Elf *elf, size_t name_max, go_func_fn fn, void *arg)
{
    GElf_Shdr sh, text;
    Elf_Scn *scn = foreign_elf_section(elf, ".gopclntab", &sh);
    if (!scn)
        scn = foreign_elf_section(elf, ".data.rel.ro.gopclntab", &sh);
    Elf_Data *d = scn && sh.sh_type != SHT_NOBITS && sh.sh_size <= PCLN_BYTES_MAX ? elf_getdata(scn, NULL) : NULL;
    if (!d || !d->d_buf)
        return -1;
    uint64_t text_start = foreign_elf_section(elf, ".text", &text) ? text.sh_addr : 0;
    return go_pclntab_walk(d->d_buf, d->d_size, text_start, name_max, fn, arg);
}
