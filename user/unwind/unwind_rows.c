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

/* A binary's DWARF call-frame information turned into the rows the kernel's
 * stack walker follows. libdw interprets the CFI (dwarf_cfi_addrframe); this
 * file only finds where each FDE starts, walks its rows one address range
 * at a time, and reduces each rule to what the walker can do on x86-64. */
#include "unwind_rows.h"

_Static_assert(sizeof(struct pt_urow) == 8, "a row is one 8-byte table entry");
_Static_assert(sizeof(struct pt_upage) == 8, "a page entry is one 8-byte table entry");
_Static_assert(sizeof(struct pt_utable_head) == 8, "the head is one 8-byte table entry");

/* ---- growable arrays ---- */

/* V with room for NEED elements of SIZE (capacity *CAP, doubled as
 * needed); NULL when out of memory, V then still valid. */
void *cfi_grow(void *v, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return v;
    size_t cap2 = *cap ? *cap : 256;
    while (cap2 < need)
        cap2 *= 2;
    void *p = realloc(v, cap2 * size);
    if (p)
        *cap = cap2;
    return p;
}

void cfi_addr_push(struct addrvec *a, uint64_t x)
{
    uint64_t *p = cfi_grow(a->v, &a->cap, a->n + 1, sizeof(*p));
    if (!p) {
        a->oom = true;
        return;
    }
    a->v = p;
    a->v[a->n++] = x;
}

static bool same_rule(const struct row *a, const struct row *b)
{
    return a->kind == b->kind && a->cfa_words == b->cfa_words && a->rbp_words == b->rbp_words;
}

/* Appends R keeping pcs strictly increasing: a row at the last row's pc
 * replaces it (a later FDE starting there wins), one before it is dropped
 * (overlapping FDEs), one with the same rule as the last adds nothing. */
static void row_push(struct rowvec *v, struct row r)
{
    if (v->n) {
        struct row *last = &v->v[v->n - 1];
        if (r.pc < last->pc)
            return;
        if (r.pc == last->pc) {
            *last = r;
            return;
        }
        if (same_rule(last, &r))
            return;
    }
    struct row *p = cfi_grow(v->v, &v->cap, v->n + 1, sizeof(*p));
    if (!p) {
        v->oom = true;
        return;
    }
    v->v = p;
    v->v[v->n++] = r;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* FDE starts in increasing order, each once; the tables are usually sorted
 * already (.eh_frame_hdr must be), .debug_frame is in link order. */
static void addr_sort_unique(struct addrvec *a)
{
    bool sorted = true;
    for (size_t i = 1; i < a->n && sorted; i++)
        sorted = a->v[i - 1] <= a->v[i];
    if (!sorted)
        qsort(a->v, a->n, sizeof(*a->v), cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++)
        if (k == 0 || a->v[k - 1] != a->v[i])
            a->v[k++] = a->v[i];
    a->n = k;
}

/* ---- ELF helpers ---- */

static Elf *elf_of(int fd)
{
    Elf *elf = foreign_elf_begin(fd);
    if (elf && elf_kind(elf) == ELF_K_ELF)
        return elf;
    elf_end(elf);
    return NULL;
}

static void close_elf(Elf *elf, int fd)
{
    elf_end(elf);
    if (fd >= 0)
        close(fd);
}

/* The rows describe x86-64 code only (registers 6, 7, 16; 8-byte words). */
static bool is_x86_64(Elf *elf)
{
    GElf_Ehdr eh;
    return gelf_getehdr(elf, &eh) && eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_machine == EM_X86_64;
}

/* Section NAME's bytes and address; NULL when absent or without bytes in
 * the file (a debug file's NOBITS copies). */
Elf_Data *cfi_section_data(Elf *elf, const char *name, uint64_t *addr)
{
    GElf_Shdr sh;
    Elf_Scn *scn = foreign_elf_section(elf, name, &sh);
    if (!scn || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
        return NULL;
    /* Debug files compress their sections; libdw reads them decompressed. */
    if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
        return NULL;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !d->d_buf || d->d_size == 0)
        return NULL;
    if (addr)
        *addr = sh.sh_addr;
    return d;
}

static void find_plts(Elf *elf, struct ranges *p)
{
    static const char *const names[] = {".plt", ".plt.sec", ".plt.got"};
    p->n = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        GElf_Shdr sh;
        if (foreign_elf_section(elf, names[i], &sh) && sh.sh_size && p->n < MAX_RANGES) {
            p->lo[p->n] = sh.sh_addr;
            p->hi[p->n++] = sh.sh_addr + sh.sh_size;
        }
    }
}

static bool in_ranges(const struct ranges *p, uint64_t pc)
{
    for (int i = 0; i < p->n; i++)
        if (pc >= p->lo[i] && pc < p->hi[i])
            return true;
    return false;
}

/* ELF's build-id as hex into HEX ("" when it has none). */
static void elf_build_id_hex(Elf *elf, char hex[2 * BUILD_ID_MAX + 1])
{
    uint8_t id[BUILD_ID_MAX];
    build_id_hex(id, build_id_read(elf, id), hex);
}

/* ---- rules ---- */

/* OPS is libdw's form of "saved at CFA + off" (DW_CFA_offset and its
 * variants): DW_OP_call_frame_cfa, then DW_OP_plus_uconst unless off is 0.
 * A value rule ends with DW_OP_stack_value and does not match. */
static bool at_cfa_offset(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
    if (nops < 1 || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa)
        return false;
    if (nops == 1) {
        *off = 0;
        return true;
    }
    if (ops[1].atom != DW_OP_plus_uconst)
        return false;
    *off = (int64_t)ops[1].number;
    return true;
}

/* The CFA as register + words. An expression is only followed in a PLT,
 * where it is the linker's standard rule. */
static bool cfa_rule(Dwarf_Frame *f, bool plt, struct row *r)
{
    Dwarf_Op *ops;
    size_t nops;
    if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0)
        return false;
    if (nops == 1 && ops[0].atom == DW_OP_bregx) {
        int64_t off = (int64_t)ops[0].number2;
        if ((ops[0].number != REG_RSP && ops[0].number != REG_RBP) || off < 0 || off % 8 ||
            off / 8 > UINT16_MAX)
            return false;
        r->kind = ops[0].number == REG_RSP ? PT_CFA_RSP : PT_CFA_RBP;
        r->cfa_words = (uint16_t)(off / 8);
        return true;
    }
    if (!plt)
        return false;
    r->kind = PT_CFA_PLT;
    r->cfa_words = 1;
    return true;
}

/* Where the caller's rbp is: unchanged (same value; undefined too, as
 * nothing can restore it) or saved in a nonzero word of the frame. */
static bool rbp_rule(Dwarf_Frame *f, int8_t *words)
{
    Dwarf_Op mem[3], *ops;
    size_t nops;
    int64_t off;
    if (dwarf_frame_register(f, REG_RBP, mem, &ops, &nops) != 0)
        return false;
    if (nops == 0) {
        *words = 0;
        return true;
    }
    if (!at_cfa_offset(ops, nops, &off) || off == 0 || off % 8 || off / 8 < INT8_MIN || off / 8 > INT8_MAX)
        return false;
    *words = (int8_t)(off / 8);
    return true;
}

/* One CFI row in the walker's terms. RA_REG is the CIE's return-address
 * column; the walker always reads the return address at CFA - 8. */
static struct row classify(Dwarf_Frame *f, int ra_reg, bool plt, uint64_t pc)
{
    struct row none = {.pc = pc, .kind = PT_CFA_NONE}, r = none;
    Dwarf_Op mem[3], *ops;
    size_t nops;
    int64_t off;
    if (ra_reg < 0 || dwarf_frame_register(f, ra_reg, mem, &ops, &nops) != 0)
        return none;
    if (nops == 0 && ops) {   /* undefined: the thread's outermost frame */
        r.kind = PT_CFA_END;
        return r;
    }
    if (!at_cfa_offset(ops, nops, &off) || off != -8 || !cfa_rule(f, plt, &r) || !rbp_rule(f, &r.rbp_words))
        return none;
    return r;
}

/* Rows of the FDE starting at START, one per CFI row, up to LIMIT (the next
 * FDE's start). Where libdw finds no FDE (past this one's end) a gap row
 * goes in, so the rule does not run on into uncovered code. */
static void walk_fde(Dwarf_CFI *cfi, uint64_t start, uint64_t limit, const struct ranges *plt, struct rowvec *rows)
{
    uint64_t pc = start;
    while (pc < limit) {
        Dwarf_Frame *f;
        if (dwarf_cfi_addrframe(cfi, pc, &f) != 0) {
            row_push(rows, (struct row){.pc = pc, .kind = ROW_GAP});
            return;
        }
        Dwarf_Addr s, e;
        int ra = dwarf_frame_info(f, &s, &e, NULL);
        row_push(rows, classify(f, ra, in_ranges(plt, pc), pc));
        free(f);
        if (e <= pc)
            return;
        pc = e;
    }
}

static void walk_fdes(Dwarf_CFI *cfi, const struct addrvec *starts, const struct ranges *plt, struct rowvec *rows)
{
    for (size_t i = 0; i < starts->n && !rows->oom; i++)
        walk_fde(cfi, starts->v[i], i + 1 < starts->n ? starts->v[i + 1] : UINT64_MAX, plt, rows);
}

/* ---- the two CFI sources ---- */

/* .eh_frame as libdw will reach it, and the FDE starts .eh_frame_hdr
 * lists (none without it): false when libdw could run instructions the
 * scan refuses, or could find CFI the scan cannot see (no section headers:
 * through PT_GNU_EH_FRAME alone). */
static bool eh_frame_ok(Elf *elf, Elf_Data **eh, uint64_t *addr, struct addrvec *starts)
{
    struct addrvec fdes = {0};
    size_t len;
    uint64_t hdr_addr;
    *eh = cfi_section_data(elf, ".eh_frame", addr);
    bool hdr = cfi_eh_hdr_starts(elf, starts, &fdes) == 0;
    if (!hdr)
        starts->n = 0;
    bool ok = *eh ? !fdes.oom && cfi_section_ok(elf, *eh, true, *addr, hdr ? &fdes : NULL)
                  : !cfi_eh_hdr_bytes(elf, &len, &hdr_addr);
    free(fdes.v);
    return ok;
}

static void eh_frame_rows(Elf *elf, const struct ranges *plt, struct rowvec *rows)
{
    uint64_t addr;
    Elf_Data *eh;
    struct addrvec starts = {0};
    Dwarf_CFI *cfi = NULL;
    if (eh_frame_ok(elf, &eh, &addr, &starts) && (cfi = dwarf_getcfi_elf(elf))) {
        if (!starts.n && eh)
            cfi_section_starts(elf, eh, addr, true, &starts);
        addr_sort_unique(&starts);
        rows->oom |= starts.oom;
        walk_fdes(cfi, &starts, plt, rows);
        dwarf_cfi_end(cfi);
    }
    free(starts.v);
}

static bool has_debug_frame(Elf *d)
{
    GElf_Shdr sh;
    Elf_Scn *scn = foreign_elf_section(d, ".debug_frame", &sh);
    return scn && sh.sh_type != SHT_NOBITS && sh.sh_size;
}

/* Rows from .debug_frame, of the file itself or of its debug file. */
static void debug_frame_rows(Elf *elf, const struct file_ref *f, const struct ranges *plt, struct rowvec *rows)
{
    int dfd = -1;
    Elf *src = elf;
    if (!has_debug_frame(elf))
        src = debug_file_open(elf, f, has_debug_frame, &dfd);
    if (!src)
        return;
    uint64_t addr;
    Elf_Data *d = cfi_section_data(src, ".debug_frame", &addr);
    Dwarf *dw = d && cfi_section_ok(src, d, false, 0, NULL) ? dwarf_begin_elf(src, DWARF_C_READ, NULL) : NULL;
    Dwarf_CFI *cfi = dw ? dwarf_getcfi(dw) : NULL;
    if (cfi) {
        struct addrvec starts = {0};
        cfi_section_starts(src, d, addr, false, &starts);
        addr_sort_unique(&starts);
        rows->oom |= starts.oom;
        walk_fdes(cfi, &starts, plt, rows);
        free(starts.v);
    }
    if (dw)
        dwarf_end(dw);
    if (src != elf)
        close_elf(src, dfd);
}

/* ---- putting the rows together ---- */

/* BASE's rules, and EXTRA's wherever BASE has a gap (or nothing yet): the
 * rows at every pc where either changes. */
static void overlay(const struct rowvec *base, const struct rowvec *extra, struct rowvec *out)
{
    const struct row *b = NULL, *e = NULL;
    size_t i = 0, j = 0;
    while (i < base->n || j < extra->n) {
        uint64_t pc = j >= extra->n || (i < base->n && base->v[i].pc <= extra->v[j].pc) ? base->v[i].pc
                                                                                      : extra->v[j].pc;
        while (i < base->n && base->v[i].pc == pc)
            b = &base->v[i++];
        while (j < extra->n && extra->v[j].pc == pc)
            e = &extra->v[j++];
        struct row r = b && b->kind != ROW_GAP ? *b : e ? *e : (struct row){.kind = ROW_GAP};
        r.pc = pc;
        row_push(out, r);
    }
}

/* The final rows: gaps become PT_CFA_NONE, equal neighbours merge, leading
 * NONE rows go (a pc before the first row has no rule anyway), and rows
 * past the walker's 32-bit pcs are cut. -1 when no usable row remains. */
/* The file's executable segments: code, where a pc can be. */
static void find_exec_segs(Elf *elf, struct ranges *x)
{
    size_t n = 0;
    x->n = 0;
    if (elf_getphdrnum(elf, &n))
        return;
    for (size_t i = 0; i < n && x->n < MAX_RANGES; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
            x->lo[x->n] = ph.p_vaddr;
            x->hi[x->n++] = ph.p_vaddr + ph.p_filesz;
        }
    }
}

/* The kernel's rows from V: only in executable segments (CFI claiming
 * code elsewhere becomes a gap), and only as far as the 32-bit pc goes. */
static int finish(const struct rowvec *v, const struct ranges *x, struct unwind_rows *out)
{
    struct pt_urow *rows = malloc((v->n ? v->n : 1) * sizeof(*rows));
    if (!rows)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < v->n && v->v[i].pc <= UINT32_MAX; i++) {
        struct pt_urow r = {.pc = (uint32_t)v->v[i].pc,
                            .cfa_words = v->v[i].cfa_words,
                            .kind = v->v[i].kind == ROW_GAP || !in_ranges(x, v->v[i].pc) ? PT_CFA_NONE
                                                                                          : v->v[i].kind,
                            .rbp_words = v->v[i].rbp_words};
        if (k == 0 && r.kind == PT_CFA_NONE)
            continue;
        if (k && rows[k - 1].kind == r.kind && rows[k - 1].cfa_words == r.cfa_words &&
            rows[k - 1].rbp_words == r.rbp_words)
            continue;
        rows[k++] = r;
    }
    if (k == 0) {
        free(rows);
        return -1;
    }
    struct pt_urow *shrunk = realloc(rows, k * sizeof(*rows));
    out->rows = shrunk ? shrunk : rows;
    out->n = k;
    return 0;
}

static int build_from_elf(Elf *elf, const struct file_ref *f, struct unwind_rows *out)
{
    char id[2 * BUILD_ID_MAX + 1];
    struct ranges plt;
    struct rowvec eh = {0}, dbg = {0}, all = {0};
    elf_build_id_hex(elf, id);
    find_plts(elf, &plt);
    eh_frame_rows(elf, &plt, &eh);
    debug_frame_rows(elf, f, &plt, &dbg);
    const struct rowvec *final = &eh;
    if (dbg.n) {
        overlay(&eh, &dbg, &all);
        final = &all;
    }
    struct ranges x;
    find_exec_segs(elf, &x);
    int rc = eh.oom || dbg.oom || all.oom ? -1 : finish(final, &x, out);
    if (rc == 0 && strlen(id) < sizeof(out->build_id))
        memcpy(out->build_id, id, strlen(id) + 1);
    free(eh.v);
    free(dbg.v);
    free(all.v);
    return rc;
}

bool unwind_rows_cfi_ok(Elf *elf)
{
    Elf_Data *eh, *d;
    uint64_t addr;
    struct addrvec starts = {0};
    bool ok = eh_frame_ok(elf, &eh, &addr, &starts);
    free(starts.v);
    return ok && (!(d = cfi_section_data(elf, ".debug_frame", NULL)) || cfi_section_ok(elf, d, false, 0, NULL));
}

int unwind_rows_build_ref(const struct file_ref *f, struct unwind_rows *out)
{
    memset(out, 0, sizeof(*out));
    if (elf_version(EV_CURRENT) == EV_NONE)
        return -1;
    Elf *elf = elf_of(f->fd);
    if (!elf)
        return -1;
    int rc = is_x86_64(elf) ? build_from_elf(elf, f, out) : -1;
    elf_end(elf);
    return rc;
}

int unwind_rows_build(const char *path, struct unwind_rows *out)
{
    struct file_ref f = {.fd = safe_open(path), .name = path};
    memset(out, 0, sizeof(*out));
    if (f.fd < 0)
        return -1;
    int rc = unwind_rows_build_ref(&f, out);
    close(f.fd);
    return rc;
}

void unwind_rows_free(struct unwind_rows *r)
{
    if (!r)
        return;
    free(r->rows);
    r->rows = NULL;
    r->n = 0;
    r->build_id[0] = '\0';
}

uint64_t *unwind_rows_table(const struct unwind_rows *r, size_t *n)
{
    *n = 0;
    if (!r || !r->n)
        return NULL;
    struct pt_utable_head h = {.first_page = r->rows[0].pc >> PT_UNWIND_PAGE_SHIFT};
    h.npages = (r->rows[r->n - 1].pc >> PT_UNWIND_PAGE_SHIFT) - h.first_page + 1;
    if (h.npages > r->n + MAX_EMPTY_PAGES)
        return NULL;
    size_t total = 1 + (size_t)h.npages + r->n;
    uint64_t *t = calloc(total, sizeof(*t));
    if (!t)
        return NULL;
    memcpy(&t[0], &h, sizeof(h));
    /* lo: the row in force at the page's start (0 if none yet); hi: the
     * last row starting before the next page. Both only move forward. */
    size_t lo = 0, hi = 0;
    for (uint32_t i = 0; i < h.npages; i++) {
        uint64_t start = (uint64_t)(h.first_page + i) << PT_UNWIND_PAGE_SHIFT;
        uint64_t next = start + (1ull << PT_UNWIND_PAGE_SHIFT);
        while (lo + 1 < r->n && r->rows[lo + 1].pc <= start)
            lo++;
        if (hi < lo)
            hi = lo;
        while (hi + 1 < r->n && r->rows[hi + 1].pc < next)
            hi++;
        struct pt_upage pg = {.lo = (uint32_t)lo, .hi = (uint32_t)hi};
        memcpy(&t[1 + i], &pg, sizeof(pg));
    }
    for (size_t i = 0; i < r->n; i++)
        memcpy(&t[1 + h.npages + i], &r->rows[i], sizeof(r->rows[i]));
    *n = total;
    return t;
}

const struct pt_urow *unwind_rows_find(const struct unwind_rows *r, uint32_t pc)
{
    if (!r || !r->n || pc < r->rows[0].pc)
        return NULL;
    size_t lo = 0, hi = r->n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (r->rows[mid].pc <= pc)
            lo = mid;
        else
            hi = mid - 1;
    }
    return &r->rows[lo];
}
