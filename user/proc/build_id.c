#include "build_id.h"

#include <elf.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

/* The build-id note in D, if any, into ID. */
static size_t note_build_id(Elf_Data *d, uint8_t *id)
{
    GElf_Nhdr nh;
    size_t off = 0, name_off, desc_off, next;
    while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz > 0 &&
            nh.n_descsz <= BUILD_ID_MAX && memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0) {
            memcpy(id, (const char *)d->d_buf + desc_off, nh.n_descsz);
            return nh.n_descsz;
        }
        off = next;
    }
    return 0;
}

size_t build_id_read(Elf *elf, uint8_t *id)
{
    size_t n = 0;
    GElf_Shdr sh;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && !n; scn = elf_nextscn(elf, scn)) {
        Elf_Data *d;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && (d = elf_getdata(scn, NULL)))
            n = note_build_id(d, id);
    }
    size_t nph;
    if (n || elf_getphdrnum(elf, &nph))
        return n;
    for (size_t i = 0; i < nph && !n; i++) {
        GElf_Phdr ph;
        Elf_Data *d;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE &&
            (d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR)))
            n = note_build_id(d, id);
    }
    return n;
}

void build_id_hex(const uint8_t *id, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
    out[2 * len] = '\0';
}
