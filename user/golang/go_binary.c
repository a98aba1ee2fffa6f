/* A Go binary read from outside (docs/go.md): its build info says it is
 * Go and which version; its DWARF, when it has it, gives the runtime's
 * offsets and wait reasons, else the version table does. The file is
 * another user's: read with pread (foreign_elf), never mapped, every
 * size and count bounded. */
#include "go_binary.h"

#include <elfutils/libdw.h>
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "foreign_elf.h"
#include "go_pclntab.h"

#define BUILDINFO_MAX 65536       /* a real one is a few hundred bytes */
#define DWARF_CUS_MAX 100000      /* compile units looked at, at most */
#define DWARF_DIES_MAX 2000000    /* DIEs looked at in the two units read */
#define DWARF_BYTES_MAX (512ull << 20)  /* debug sections, as decompressed, all together */
#define SYMTAB_MAX (256ull << 20)       /* a symbol table read whole */

const char *const go_probe_names[GO_PROBE_COUNT] = {
    [GO_PROBE_SEMACQUIRE] = "runtime.semacquire1",
    [GO_PROBE_PARK] = "runtime.gopark",
    [GO_PROBE_READY] = "runtime.goready",
};

/* Go 1.18 and later keep the version inline: 14 bytes of magic, the
 * pointer size, flags (2: strings inline), padding to 32, then the version
 * as a varint length and its bytes. */
bool go_buildinfo_version(const unsigned char *buf, size_t len, char *version, size_t cap)
{
    static const char magic[] = "\xff Go buildinf:";
    if (len < 33 || memcmp(buf, magic, 14) != 0 || !(buf[15] & 2))
        return false;
    size_t n = 0, at = 32;
    for (int shift = 0; at < len && shift < 28; shift += 7) {
        n |= (size_t)(buf[at] & 0x7f) << shift;
        if (!(buf[at++] & 0x80))
            break;
    }
    if (n == 0 || n >= cap || n > len - at || strncmp((const char *)buf + at, "go1.", 4) != 0)
        return false;
    memcpy(version, buf + at, n);
    version[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (version[i] < '!' || version[i] > '~')
            return false;
    return true;
}

/* Minor version of "go1.N..." (0 when not of that shape). */
static int go_minor(const char *version)
{
    if (strncmp(version, "go1.", 4) != 0)
        return 0;
    return atoi(version + 4);
}

bool go_layout_of_version(const char *version, struct pt_go_layout *out)
{
    /* Go 1.19 (Debian 12's), checked against its DWARF by tests/unit/test_go_binary.c. */
    if (go_minor(version) != 19)
        return false;
    *out = (struct pt_go_layout){.goid = 152, .chan_lock = 88, .cond_lock = 24};
    out->reason[PT_GO_SEMA] = 18;
    out->reason[PT_GO_COND] = 20;
    out->reason[PT_GO_RECV] = 14;
    out->reason[PT_GO_SEND] = 15;
    out->reason[PT_GO_SELECT] = 9;
    return true;
}

/* What the DWARF walk looks for; -1: not found. */
struct dwarf_finds {
    long goid, chan_lock, notify_lock, cond_notify;
    long reason[PT_GO_WAIT_COUNT];
};

static const char *const reason_names[PT_GO_WAIT_COUNT] = {
    [PT_GO_SEMA] = "runtime.waitReasonSemacquire",  [PT_GO_COND] = "runtime.waitReasonSyncCondWait",
    [PT_GO_RECV] = "runtime.waitReasonChanReceive", [PT_GO_SEND] = "runtime.waitReasonChanSend",
    [PT_GO_SELECT] = "runtime.waitReasonSelect",
};

/* The offset of member NAME of structure DIE, or -1. */
static long member_offset(Dwarf_Die *die, const char *name, long *budget)
{
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return -1;
    do {
        if (--*budget < 0)
            return -1;
        const char *n = dwarf_diename(&child);
        Dwarf_Attribute a;
        Dwarf_Word off;
        if (dwarf_tag(&child) == DW_TAG_member && n && strcmp(n, name) == 0 &&
            dwarf_attr(&child, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &off) == 0)
            return off < 65536 ? (long)off : -1;
    } while (dwarf_siblingof(&child, &child) == 0);
    return -1;
}

static void note_die(Dwarf_Die *die, struct dwarf_finds *f, long *budget)
{
    const char *n = dwarf_diename(die);
    if (!n)
        return;
    int tag = dwarf_tag(die);
    if (tag == DW_TAG_structure_type) {
        if (strcmp(n, "runtime.g") == 0)
            f->goid = member_offset(die, "goid", budget);
        else if (strcmp(n, "runtime.hchan") == 0)
            f->chan_lock = member_offset(die, "lock", budget);
        else if (strcmp(n, "runtime.notifyList") == 0 || strcmp(n, "sync.notifyList") == 0)
            f->notify_lock = member_offset(die, "lock", budget);
        else if (strcmp(n, "sync.Cond") == 0)
            f->cond_notify = member_offset(die, "notify", budget);
        return;
    }
    if (tag != DW_TAG_constant || strncmp(n, "runtime.waitReason", 18) != 0)
        return;
    for (int w = 1; w < PT_GO_WAIT_COUNT; w++) {
        Dwarf_Attribute a;
        Dwarf_Word v;
        if (strcmp(n, reason_names[w]) == 0 && dwarf_attr(die, DW_AT_const_value, &a) &&
            dwarf_formudata(&a, &v) == 0 && v > 0 && v < 256)
            f->reason[w] = (long)v;
    }
}

/* The runtime's and sync's compile units, their top-level DIEs noted. */
static void walk_dwarf(Dwarf *dw, struct dwarf_finds *f)
{
    Dwarf_Off off = 0, next;
    size_t hsize;
    long budget = DWARF_DIES_MAX;
    for (int cus = 0; cus < DWARF_CUS_MAX && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0;
         cus++, off = next) {
        Dwarf_Die cu, die;
        const char *name;
        if (!dwarf_offdie(dw, off + hsize, &cu) || !(name = dwarf_diename(&cu)) ||
            (strcmp(name, "runtime") != 0 && strcmp(name, "sync") != 0) || dwarf_child(&cu, &die) != 0)
            continue;
        do
            note_die(&die, f, &budget);
        while (budget-- > 0 && dwarf_siblingof(&die, &die) == 0);
    }
}

/* Whether ELF's debug sections are of a size to decompress: libdw
 * inflates them whole, and a header can claim any size (a few bytes that
 * say 100 GiB). GNU's .zdebug sections, which Go stopped writing in 1.12,
 * are not read. */
static bool dwarf_size_ok(Elf *elf)
{
    size_t shstrndx;
    uint64_t total = 0;
    if (elf_getshdrstrndx(elf, &shstrndx))
        return false;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        GElf_Chdr ch;
        const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (!n || strncmp(n, ".zdebug", 7) == 0)
            return false;
        if (strncmp(n, ".debug", 6) != 0)
            continue;
        if (sh.sh_flags & SHF_COMPRESSED)
            total += gelf_getchdr(scn, &ch) ? ch.ch_size : DWARF_BYTES_MAX;
        else
            total += sh.sh_size;
        if (total > DWARF_BYTES_MAX)
            return false;
    }
    return true;
}

/* The layout from ELF's DWARF: false when any part the kernel needs is
 * missing (a condition's offsets may be: a program without sync.Cond). */
static bool layout_from_dwarf(Elf *elf, struct pt_go_layout *out)
{
    Dwarf *dw = dwarf_size_ok(elf) ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
    if (!dw)
        return false;
    struct dwarf_finds f;
    memset(&f, 0xff, sizeof(f));
    walk_dwarf(dw, &f);
    dwarf_end(dw);
    bool complete = f.goid >= 0 && f.chan_lock >= 0;
    for (int w = 1; w < PT_GO_WAIT_COUNT; w++)
        complete = complete && f.reason[w] > 0;
    if (!complete)
        return false;
    *out = (struct pt_go_layout){.goid = (uint32_t)f.goid, .chan_lock = (uint32_t)f.chan_lock, .cond_lock = 24};
    if (f.cond_notify >= 0 && f.notify_lock >= 0)
        out->cond_lock = (uint32_t)(f.cond_notify + f.notify_lock);
    for (int w = 1; w < PT_GO_WAIT_COUNT; w++)
        out->reason[w] = (uint8_t)f.reason[w];
    return true;
}

static bool read_version(Elf *elf, char *version, size_t cap)
{
    GElf_Shdr sh;
    Elf_Scn *scn = foreign_elf_section(elf, ".go.buildinfo", &sh);
    if (!scn || sh.sh_type == SHT_NOBITS || sh.sh_size < 33 || sh.sh_size > BUILDINFO_MAX)
        return false;
    Elf_Data *d = elf_getdata(scn, NULL);
    return d && d->d_buf && go_buildinfo_version(d->d_buf, d->d_size, version, cap);
}

/* Notes ADDR for NAME if it is one of the probed functions. */
static bool note_probe(const char *name, uint64_t addr, uint64_t size, void *arg)
{
    (void)size;
    uint64_t *vaddr = arg;
    for (int p = 0; p < GO_PROBE_COUNT; p++)
        if (!vaddr[p] && strcmp(name, go_probe_names[p]) == 0)
            vaddr[p] = addr;
    return true;
}

static bool all_found(const uint64_t *vaddr)
{
    for (int p = 0; p < GO_PROBE_COUNT; p++)
        if (!vaddr[p])
            return false;
    return true;
}

static void probes_from_symtab(Elf *elf, uint64_t *vaddr)
{
    GElf_Shdr sh;
    Elf_Scn *scn = foreign_elf_section(elf, ".symtab", &sh);
    Elf_Data *d = scn && sh.sh_type == SHT_SYMTAB && sh.sh_entsize && sh.sh_size <= SYMTAB_MAX
                      ? elf_getdata(scn, NULL) : NULL;
    size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; i < n && i < INT32_MAX; i++) {
        GElf_Sym sym;
        const char *name;
        if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_value &&
            (name = elf_strptr(elf, sh.sh_link, sym.st_name)))
            note_probe(name, sym.st_value, sym.st_size, vaddr);
    }
}

/* Go's own function table: a stripped program keeps it (its runtime
 * needs it). */
static void probes_from_pclntab(Elf *elf, uint64_t *vaddr)
{
    go_pclntab_walk_elf(elf, 256, note_probe, vaddr);
}

/* VADDR's offset in the file, from its loadable segments; 0: none. */
static uint64_t file_offset(Elf *elf, uint64_t vaddr)
{
    size_t nph;
    if (elf_getphdrnum(elf, &nph))
        return 0;
    for (size_t i = 0; i < nph && i < 64; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
            vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz)
            return vaddr - ph.p_vaddr + ph.p_offset;
    }
    return 0;
}

/* Where the probed functions lie in the file: its symbol table's, else
 * Go's function table's; false when one is missing. */
static bool find_probes(Elf *elf, struct go_binary *out)
{
    uint64_t vaddr[GO_PROBE_COUNT] = {0};
    probes_from_symtab(elf, vaddr);
    if (!all_found(vaddr)) {
        memset(vaddr, 0, sizeof(vaddr));
        probes_from_pclntab(elf, vaddr);
        out->from_pclntab = true;
    }
    for (int p = 0; p < GO_PROBE_COUNT; p++)
        if (!vaddr[p] || !(out->probe_offset[p] = file_offset(elf, vaddr[p])))
            return false;
    return true;
}

enum go_binary_result go_binary_read(int fd, struct go_binary *out)
{
    memset(out, 0, sizeof(*out));
    Elf *elf = elf_version(EV_CURRENT) != EV_NONE ? foreign_elf_begin(fd) : NULL;
    if (!elf)
        return GO_NOT_GO;
    enum go_binary_result r = GO_NOT_GO;
    GElf_Ehdr eh;
    if (gelf_getehdr(elf, &eh) && read_version(elf, out->version, sizeof(out->version))) {
        /* The register ABI (g in r14) is amd64's from Go 1.17; the inline
         * build info is 1.18's. */
        r = GO_UNSUPPORTED;
        if (eh.e_machine == EM_X86_64 && go_minor(out->version) >= 18) {
            out->from_dwarf = layout_from_dwarf(elf, &out->layout);
            if ((out->from_dwarf || go_layout_of_version(out->version, &out->layout)) && find_probes(elf, out))
                r = GO_READ;
        }
    }
    elf_end(elf);
    return r;
}
