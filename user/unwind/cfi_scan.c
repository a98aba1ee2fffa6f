/* Where a binary's FDEs start (.eh_frame_hdr's table, or a walk of the
 * section), and whether its CFI is something libdw can read without
 * allocating what a hostile file asks for: checked before libdw sees it. */
#include "unwind_rows.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_id.h"
#include "debug_file.h"
#include "foreign_elf.h"
#include "unwind_rows_parts.h"

/* ---- pointer encodings (DW_EH_PE_*) ---- */

static uint64_t read_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static bool read_leb(const uint8_t **p, const uint8_t *end, bool sign, uint64_t *out)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        if (*p >= end || shift >= 64)
            return false;
        b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (sign && shift < 64 && (b & 0x40))
        v |= ~0ull << shift;
    *out = v;
    return true;
}

/* Reads one pointer of encoding ENC at *P. FIELD is the pointer's own
 * virtual address (pcrel); DATA the datarel base, UINT64_MAX when there is
 * none. Indirect, text- and function-relative pointers are not needed for
 * FDE addresses of linked files. */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t field, uint64_t data,
                         uint64_t *out)
{
    static const int sizes[16] = {[DW_EH_PE_absptr] = 8, [DW_EH_PE_udata2] = 2, [DW_EH_PE_udata4] = 4,
                                  [DW_EH_PE_udata8] = 8, [DW_EH_PE_sdata2] = 2, [DW_EH_PE_sdata4] = 4,
                                  [DW_EH_PE_sdata8] = 8};
    const uint8_t *q = *p;
    uint64_t v;
    int fmt = enc & 0x0f, size = sizes[fmt];
    if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
        return false;
    if (fmt == DW_EH_PE_uleb128 || fmt == DW_EH_PE_sleb128) {
        if (!read_leb(&q, end, fmt == DW_EH_PE_sleb128, &v))
            return false;
    } else {
        if (size == 0 || end - q < size)
            return false;
        v = read_le(q, size);
        if (size < 8 && (fmt & DW_EH_PE_signed) && (v >> (8 * size - 1)))
            v |= ~0ull << (8 * size);
        q += size;
    }
    switch (enc & 0x70) {
    case DW_EH_PE_absptr:
        break;
    case DW_EH_PE_pcrel:
        v += field;
        break;
    case DW_EH_PE_datarel:
        if (data == UINT64_MAX)
            return false;
        v += data;
        break;
    default:
        return false;
    }
    *p = q;
    *out = v;
    return true;
}

/* ---- where FDEs start ---- */

/* .eh_frame_hdr's bytes and address, by section or by PT_GNU_EH_FRAME. */
const uint8_t *cfi_eh_hdr_bytes(Elf *elf, size_t *len, uint64_t *addr)
{
    Elf_Data *d = cfi_section_data(elf, ".eh_frame_hdr", addr);
    if (d) {
        *len = d->d_size;
        return d->d_buf;
    }
    size_t nph;
    if (elf_getphdrnum(elf, &nph))
        return NULL;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME &&
            (d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_BYTE))) {
            *len = d->d_size;
            *addr = ph.p_vaddr;
            return d->d_buf;
        }
    }
    return NULL;
}

/* FDE starts from .eh_frame_hdr's binary-search table: version 1, then the
 * encodings of the .eh_frame pointer, the count and the table entries
 * (initial location, FDE address), datarel meaning "from the header". */
int cfi_eh_hdr_starts(Elf *elf, struct addrvec *out, struct addrvec *fdes)
{
    size_t len;
    uint64_t base, v, count;
    const uint8_t *d = cfi_eh_hdr_bytes(elf, &len, &base);
    if (!d || len < 4 || d[0] != 1)
        return -1;
    const uint8_t *p = d + 4, *end = d + len;
    if (!read_encoded(&p, end, d[1], base + (p - d), base, &v) ||
        !read_encoded(&p, end, d[2], base + (p - d), base, &count) || d[3] == DW_EH_PE_omit ||
        count > len / 2)
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t loc, fde;
        if (!read_encoded(&p, end, d[3], base + (p - d), base, &loc) ||
            !read_encoded(&p, end, d[3], base + (p - d), base, &fde))
            return -1;
        cfi_addr_push(out, loc);
        cfi_addr_push(fdes, fde);
    }
    return out->n ? 0 : -1;
}

/* A CIE's pointer encoding for its FDEs' addresses: the 'R' entry of its
 * "z" augmentation data, absptr without one; omit when unreadable. */
static uint8_t cie_fde_encoding(const Dwarf_CIE *cie)
{
    const char *a = cie->augmentation;
    if (!a || a[0] != 'z')
        return a && a[0] ? DW_EH_PE_omit : DW_EH_PE_absptr;
    const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
    uint64_t skip;
    for (a++; *a; a++) {
        if (*a == 'R')
            return p < end ? *p : DW_EH_PE_omit;
        if (*a == 'L')
            p++;
        else if (*a == 'P') {
            if (p >= end)
                return DW_EH_PE_omit;
            uint8_t enc = *p++;
            if (!read_encoded(&p, end, enc & 0x0f, 0, 0, &skip))
                return DW_EH_PE_omit;
        } else if (*a != 'S' && *a != 'B' && *a != 'G')
            return DW_EH_PE_omit;
    }
    return DW_EH_PE_absptr;
}

struct cie_enc {
    Dwarf_Off off;
    uint8_t enc;
};

static uint8_t lookup_enc(const struct cie_enc *c, size_t n, Dwarf_Off off)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c[mid].off == off)
            return c[mid].enc;
        if (c[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return DW_EH_PE_omit;
}

/* FDE starts by reading every entry of a CFI section: .debug_frame (an
 * absolute address), or .eh_frame when it has no .eh_frame_hdr table
 * (static executables), where each CIE says how its FDEs encode it. */
void cfi_section_starts(Elf *elf, Elf_Data *d, uint64_t addr, bool eh, struct addrvec *out)
{
    const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
    struct cie_enc *cies = NULL;
    size_t ncies = 0, cap = 0;
    Dwarf_Off off = 0, next;
    Dwarf_CFI_Entry e;
    int rc;
    while (ident) {
        next = (Dwarf_Off)-1;
        if ((rc = dwarf_next_cfi(ident, d, eh, off, &next, &e)) == 1)
            break;
        if (rc == 0 && dwarf_cfi_cie_p(&e)) {
            /* Offsets only cfi_grow, so the array stays sorted for lookup_enc. */
            struct cie_enc *c = eh ? cfi_grow(cies, &cap, ncies + 1, sizeof(*c)) : NULL;
            if (c) {
                cies = c;
                cies[ncies++] = (struct cie_enc){off, cie_fde_encoding(&e.cie)};
            } else if (eh) {
                out->oom = true;
            }
        } else if (rc == 0) {
            const uint8_t *p = e.fde.start;
            uint64_t loc;
            /* .debug_frame holds absolute 8-byte addresses; 0 marks the FDE
             * of code the linker discarded. */
            uint8_t enc = eh ? lookup_enc(cies, ncies, e.fde.CIE_pointer) : DW_EH_PE_udata8;
            if (read_encoded(&p, e.fde.end, enc, addr + (uint64_t)(p - (const uint8_t *)d->d_buf), UINT64_MAX,
                             &loc) &&
                loc != 0)
                cfi_addr_push(out, loc);
        }
        if (next == (Dwarf_Off)-1 || next <= off)
            break;
        off = next;
    }
    free(cies);
}

/* ---- CFI a reader can afford ---- */

/* libdw sizes a frame's register array by the highest register number its
 * instructions name: DW_CFA_undefined r200000000 costs 1.6 GB. x86-64's
 * DWARF numbers end near 130. */
#define MAX_CFI_REG 255

static bool reg_ok(const uint8_t **p, const uint8_t *end)
{
    uint64_t r;
    return read_leb(p, end, false, &r) && r <= MAX_CFI_REG;
}

static bool skip_leb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v;
    return read_leb(p, end, false, &v);
}

static bool skip_block(const uint8_t **p, const uint8_t *end)
{
    uint64_t len;
    if (!read_leb(p, end, false, &len) || len > (uint64_t)(end - *p))
        return false;
    *p += len;
    return true;
}

/* Whether the call-frame instructions in [P, END) are all known and name
 * no register above MAX_CFI_REG. DW_CFA_set_loc, whose operand's size
 * depends on the FDE, is not needed by linked code and not accepted. */
static bool insns_ok(const uint8_t *p, const uint8_t *end)
{
    while (p < end) {
        uint8_t op = *p++;
        if (op & 0xc0) {               /* advance_loc, offset, restore: the register fits in 6 bits */
            if ((op & 0xc0) == DW_CFA_offset && !skip_leb(&p, end))
                return false;
            continue;
        }
        bool ok;
        switch (op) {
        case DW_CFA_nop: case DW_CFA_remember_state: case DW_CFA_restore_state:
            ok = true;
            break;
        case DW_CFA_advance_loc1: case DW_CFA_advance_loc2: case DW_CFA_advance_loc4: {
            long n = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;
            ok = end - p >= n;
            p += ok ? n : 0;
            break;
        }
        case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
        case DW_CFA_def_cfa_register:
            ok = reg_ok(&p, end);
            break;
        case DW_CFA_offset_extended: case DW_CFA_def_cfa: case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa_sf:
        case DW_CFA_val_offset: case DW_CFA_val_offset_sf: case DW_CFA_GNU_negative_offset_extended:
            ok = reg_ok(&p, end) && skip_leb(&p, end);
            break;
        case DW_CFA_register:
            ok = reg_ok(&p, end) && reg_ok(&p, end);
            break;
        case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf: case DW_CFA_GNU_args_size:
            ok = skip_leb(&p, end);
            break;
        case DW_CFA_def_cfa_expression:
            ok = skip_block(&p, end);
            break;
        case DW_CFA_expression: case DW_CFA_val_expression:
            ok = reg_ok(&p, end) && skip_block(&p, end);
            break;
        default:
            ok = false;
        }
        if (!ok)
            return false;
    }
    return true;
}

/* The FDE at OFF in section D and its CIE: instructions libdw can run at
 * a bounded cost. */
static bool fde_at_ok(const unsigned char *ident, Elf_Data *d, bool eh, Dwarf_Off off)
{
    Dwarf_CFI_Entry f, c;
    Dwarf_Off next;
    if (dwarf_next_cfi(ident, d, eh, off, &next, &f) != 0 || dwarf_cfi_cie_p(&f) ||
        dwarf_next_cfi(ident, d, eh, f.fde.CIE_pointer, &next, &c) != 0 || !dwarf_cfi_cie_p(&c) ||
        !insns_ok(c.cie.initial_instructions, c.cie.initial_instructions_end))
        return false;
    uint8_t enc = eh ? cie_fde_encoding(&c.cie) & 0x0f : DW_EH_PE_udata8;
    const uint8_t *p = f.fde.start, *end = f.fde.end;
    uint64_t skip;
    /* Instructions follow the initial location, the range and, with a 'z'
     * augmentation, its data. */
    return read_encoded(&p, end, enc, 0, 0, &skip) && read_encoded(&p, end, enc, 0, 0, &skip) &&
           (!c.cie.augmentation || c.cie.augmentation[0] != 'z' || skip_block(&p, end)) && insns_ok(p, end);
}

/* Whether every FDE of section D (.eh_frame when EH) that libdw may run is
 * one it can run at a bounded cost: those met entry by entry, and those
 * .eh_frame_hdr's table names (FDES: their addresses, EH_ADDR the
 * section's), which could lie hidden inside another entry. One that is not
 * spoils the section: real compilers never write such a thing. */
bool cfi_section_ok(Elf *elf, Elf_Data *d, bool eh, uint64_t eh_addr, const struct addrvec *fdes)
{
    const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
    Dwarf_Off off = 0, next;
    Dwarf_CFI_Entry e;
    if (!ident)
        return false;
    for (size_t i = 0; fdes && i < fdes->n; i++)
        if (fdes->v[i] < eh_addr || !fde_at_ok(ident, d, eh, fdes->v[i] - eh_addr))
            return false;
    for (;;) {
        next = (Dwarf_Off)-1;
        int rc = dwarf_next_cfi(ident, d, eh, off, &next, &e);
        if (rc == 1)
            return true;
        if (rc == 0 && (dwarf_cfi_cie_p(&e) ? !insns_ok(e.cie.initial_instructions, e.cie.initial_instructions_end)
                                            : !fde_at_ok(ident, d, eh, off)))
            return false;
        if (next == (Dwarf_Off)-1 || next <= off)
            return true;
        off = next;
    }
}
