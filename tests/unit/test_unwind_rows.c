/* Unwind rows built from CFI, checked address by address against libdw's
 * own reading of the same CFI: programs this test builds (omitted and kept
 * frame pointers, .debug_frame in the file and in a debuglink file, a
 * static executable without .eh_frame_hdr), libc and libjvm. Also the
 * table layout the kernel walks, and files without CFI. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "elfsyms.h"
#include "unwind_rows.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBJVM "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
#define BPF_ROW_STEPS 13      /* UNWIND_ROW_STEPS of bpf/unwind.bpf.h */

static const char *source =
    "#include <alloca.h>\n#include <stdio.h>\n#include <string.h>\n"
    "__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }\n"
    "__attribute__((noinline)) int big_frame(int n) { volatile char b[8192];\n"
    "  for (int i = 0; i < n; i++) b[i * 31 % 8192] = (char)i; return b[n % 8192]; }\n"
    "__attribute__((noinline)) int huge_frame(int n) { volatile char b[1 << 20]; b[n] = 1; return b[n / 2]; }\n"
    "__attribute__((noinline)) int vla(int n) { char *p = alloca(n); memset(p, n, n); return p[n / 2] + leaf(n); }\n"
    "__attribute__((noinline)) int fib(int n) { return n < 2 ? leaf(n) : fib(n - 1) + fib(n - 2); }\n"
    "int main(int argc, char **argv) { (void)argv;\n"
    "  printf(\"%d\\n\", leaf(argc) + big_frame(argc + 100) + huge_frame(argc) + vla(argc + 16) + fib(argc + 5));\n"
    "  return 0; }\n";

static int sh(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const struct pt_urow none_row = {.kind = PT_CFA_NONE};

static bool same_rule(const struct pt_urow *a, const struct pt_urow *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == PT_CFA_RSP || a->kind == PT_CFA_RBP)
        return a->cfa_words == b->cfa_words && a->rbp_words == b->rbp_words;
    if (a->kind == PT_CFA_PLT)
        return a->rbp_words == b->rbp_words;
    return true;
}

static bool is_plt(const char *name)
{
    return strcmp(name, ".plt") == 0 || strcmp(name, ".plt.sec") == 0 || strcmp(name, ".plt.got") == 0;
}

/* libdw's rule at PC in the walker's terms, written from the row semantics
 * of bpf/parktrace.h; false when no FDE of CFI covers PC. */
static bool libdw_rule(Dwarf_CFI *cfi, uint64_t pc, bool plt, struct pt_urow *want)
{
    Dwarf_Frame *f;
    *want = none_row;
    if (!cfi || dwarf_cfi_addrframe(cfi, pc, &f) != 0)
        return false;
    Dwarf_Op mem[3], *ops, *cfa;
    size_t n, ncfa;
    int ra = dwarf_frame_info(f, NULL, NULL, NULL);
    if (dwarf_frame_register(f, ra, mem, &ops, &n) == 0 && n == 0 && ops == mem) {
        want->kind = PT_CFA_END;    /* return address undefined */
        free(f);
        return true;
    }
    bool ra_ok = n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst &&
                 (int64_t)ops[1].number == -8;
    int64_t rbp_off = 0;
    bool rbp_ok = dwarf_frame_register(f, 6, mem, &ops, &n) == 0 &&
                  (n == 0 || (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst));
    if (rbp_ok && n == 2)
        rbp_off = (int64_t)ops[1].number;
    rbp_ok = rbp_ok && rbp_off % 8 == 0 && rbp_off >= -8 * 128 && rbp_off <= 8 * 127;
    bool reg = dwarf_frame_cfa(f, &cfa, &ncfa) == 0 && ncfa == 1 && cfa[0].atom == DW_OP_bregx;
    bool expr = !reg && ncfa > 0;
    int64_t cfa_off = reg ? (int64_t)cfa[0].number2 : 0;
    if (ra_ok && rbp_ok && reg && (cfa[0].number == 7 || cfa[0].number == 6) && cfa_off >= 0 && cfa_off % 8 == 0 &&
        cfa_off <= 8 * 65535) {
        want->kind = cfa[0].number == 7 ? PT_CFA_RSP : PT_CFA_RBP;
        want->cfa_words = (uint16_t)(cfa_off / 8);
        want->rbp_words = (int8_t)(rbp_off / 8);
    } else if (ra_ok && rbp_ok && expr && plt) {
        want->kind = PT_CFA_PLT;
        want->rbp_words = (int8_t)(rbp_off / 8);
    }
    free(f);
    return true;
}

/* Every STRIDE-th byte of every executable section of PATH: the row found
 * gives libdw's rule (.eh_frame first, then DEBUG's .debug_frame), and
 * PT_CFA_NONE (or no row) where neither covers it. */
static void compare_with_libdw(const char *path, const struct unwind_rows *r, Dwarf_CFI *debug, unsigned stride,
                               const char *what)
{
    int fd = open(path, O_RDONLY);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
    Dwarf_CFI *eh = elf ? dwarf_getcfi_elf(elf) : NULL;
    size_t shstrndx = 0, compared = 0, bad = 0;
    if (elf)
        elf_getshdrstrndx(elf, &shstrndx);
    for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr s;
        if (!gelf_getshdr(scn, &s) || !(s.sh_flags & SHF_EXECINSTR))
            continue;
        const char *name = elf_strptr(elf, shstrndx, s.sh_name);
        bool plt = name && is_plt(name);
        for (uint64_t pc = s.sh_addr; pc < s.sh_addr + s.sh_size; pc += stride) {
            struct pt_urow want;
            if (!libdw_rule(eh, pc, plt, &want))
                libdw_rule(debug, pc, plt, &want);
            const struct pt_urow *got = unwind_rows_find(r, (uint32_t)pc);
            if (!got)
                got = &none_row;
            compared++;
            if (!same_rule(&want, got) && bad++ < 5)
                printf("  %s: at %#llx (%s) libdw says kind %u cfa %u rbp %d, row says kind %u cfa %u rbp %d\n",
                       what, (unsigned long long)pc, name, want.kind, want.cfa_words, want.rbp_words, got->kind,
                       got->cfa_words, got->rbp_words);
        }
    }
    CHECK(compared > 0 && bad == 0, "%s: rows agree with libdw at %zu addresses (%zu differ)", what, compared, bad);
    if (eh)
        dwarf_cfi_end(eh);
    elf_end(elf);
    if (fd >= 0)
        close(fd);
}

static void check_sorted(const struct unwind_rows *r, const char *what)
{
    size_t bad = 0, same = 0;
    for (size_t i = 1; i < r->n; i++) {
        bad += r->rows[i - 1].pc >= r->rows[i].pc;
        same += same_rule(&r->rows[i - 1], &r->rows[i]);
    }
    CHECK(bad == 0, "%s: rows sorted by pc, no pc twice", what);
    CHECK(same == 0, "%s: no two neighbouring rows with one rule (%zu)", what, same);
    CHECK(r->n && r->rows[0].kind != PT_CFA_NONE, "%s: the first row has a rule", what);
}

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

static struct pt_urow entry_row(const uint64_t *t, size_t k)
{
    struct pt_urow r;
    memcpy(&r, &t[k], sizeof(r));
    return r;
}

/* The kernel's lookup, step for step as bpf/unwind.bpf.h does it: head,
 * the pc's page entry, then a bounded binary search in [lo, hi]. Returns
 * the row index, -1 for no row. */
static long table_lookup(const uint64_t *t, size_t n, uint32_t pc)
{
    struct pt_utable_head h;
    struct pt_upage pg;
    memcpy(&h, &t[0], sizeof(h));
    uint32_t page = pc >> PT_UNWIND_PAGE_SHIFT;
    if (page < h.first_page || page - h.first_page >= h.npages || 1 + (size_t)(page - h.first_page) >= n)
        return -1;
    memcpy(&pg, &t[1 + page - h.first_page], sizeof(pg));
    uint32_t lo = pg.lo, hi = pg.hi, base = 1 + h.npages;
    for (int i = 0; i < BPF_ROW_STEPS && lo < hi; i++) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (base + (size_t)mid >= n)
            return -1;
        if (entry_row(t, base + mid).pc <= pc)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (base + (size_t)lo >= n || entry_row(t, base + lo).pc > pc)
        return -1;
    return lo;
}

static void check_one_lookup(const struct unwind_rows *r, const uint64_t *t, size_t n, uint32_t pc, size_t *bad)
{
    const struct pt_urow *want = unwind_rows_find(r, pc);
    long got = table_lookup(t, n, pc);
    const struct pt_urow *g = got >= 0 ? &r->rows[got] : &none_row;
    /* Past the last page the kernel finds nothing, where the last row is a
     * PT_CFA_NONE gap row anyway. */
    bool ok = got >= 0 ? want == g : !want || want->kind == PT_CFA_NONE;
    if (!ok && (*bad)++ < 5)
        printf("  lookup of %#x: table gives row %ld, binary search row %ld\n", pc, got,
               want ? (long)(want - r->rows) : -1L);
}

static void check_table(const struct unwind_rows *r, const char *what)
{
    size_t n = 0;
    uint64_t *t = unwind_rows_table(r, &n);
    CHECK(t != NULL, "%s: table built", what);
    if (!t)
        return;
    struct pt_utable_head h;
    memcpy(&h, &t[0], sizeof(h));
    uint32_t last = r->rows[r->n - 1].pc >> PT_UNWIND_PAGE_SHIFT;
    CHECK(h.first_page == r->rows[0].pc >> PT_UNWIND_PAGE_SHIFT && h.npages == last - h.first_page + 1 &&
              n == 1 + h.npages + r->n,
          "%s: head {first_page %u, npages %u}, %zu entries", what, h.first_page, h.npages, n);
    size_t rows_ok = 0, pages_ok = 0;
    for (size_t i = 0; i < r->n; i++)
        rows_ok += memcmp(&t[1 + h.npages + i], &r->rows[i], sizeof(r->rows[i])) == 0;
    for (uint32_t i = 0; i < h.npages; i++) {
        struct pt_upage pg;
        memcpy(&pg, &t[1 + i], sizeof(pg));
        uint64_t start = (uint64_t)(h.first_page + i) << PT_UNWIND_PAGE_SHIFT;
        /* lo: the row in force at the page's start; hi: the last row before
         * the next page; few enough for the kernel's bounded search. */
        const struct pt_urow *at = unwind_rows_find(r, (uint32_t)start);
        size_t lo = at ? (size_t)(at - r->rows) : 0;
        const struct pt_urow *end = unwind_rows_find(r, (uint32_t)(start + (1u << PT_UNWIND_PAGE_SHIFT) - 1));
        size_t hi = end ? (size_t)(end - r->rows) : 0;
        pages_ok += pg.lo == lo && pg.hi == hi && pg.hi - pg.lo < (1u << (BPF_ROW_STEPS - 1)) + 1;
    }
    CHECK(rows_ok == r->n, "%s: table rows are the rows", what);
    CHECK(pages_ok == h.npages, "%s: every page entry holds [lo, hi] of its page (%zu of %u)", what, pages_ok,
          h.npages);
    size_t bad = 0, tried = 0;
    uint32_t lo = r->rows[0].pc > 64 ? r->rows[0].pc - 64 : 0, span = r->rows[r->n - 1].pc - lo + 8192;
    for (size_t i = 0; i < r->n; i++, tried += 2) {
        check_one_lookup(r, t, n, r->rows[i].pc, &bad);
        check_one_lookup(r, t, n, r->rows[i].pc - 1, &bad);
    }
    for (int i = 0; i < 200000; i++, tried++)
        check_one_lookup(r, t, n, lo + rng() % span, &bad);
    CHECK(bad == 0, "%s: lookups through the table find the binary search's row (%zu pcs, %zu differ)", what,
          tried, bad);
    free(t);
}

static void count_kinds(const struct unwind_rows *r, size_t k[5])
{
    memset(k, 0, 5 * sizeof(k[0]));
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].kind < 5)
            k[r->rows[i].kind]++;
}

/* The rows between a function's first and last byte, from its symbol. */
static bool fn_range(const char *bin, const char *name, uint32_t *lo, uint32_t *hi)
{
    struct elf_file *ef = elfsyms_get_path(bin);
    const struct elf_sym *s = ef ? elfsyms_find(ef, name) : NULL;
    if (!s || !s->size)
        return false;
    *lo = (uint32_t)s->addr;
    *hi = (uint32_t)(s->addr + s->size);
    return true;
}

/* Whether some pc of function NAME in BIN finds a row of kind KIND with at
 * least MIN_WORDS CFA words. */
static bool fn_has(const struct unwind_rows *r, const char *bin, const char *name, int kind, unsigned min_words)
{
    uint32_t lo, hi;
    if (!fn_range(bin, name, &lo, &hi))
        return false;
    for (uint32_t pc = lo; pc < hi; pc++) {
        const struct pt_urow *row = unwind_rows_find(r, pc);
        if (row && row->kind == kind && row->cfa_words >= min_words)
            return true;
    }
    return false;
}

static bool has_kind(const struct unwind_rows *r, uint32_t pc, int kind)
{
    const struct pt_urow *row = unwind_rows_find(r, pc);
    return row && row->kind == kind;
}

static bool build(const char *path, struct unwind_rows *r, const char *what)
{
    int rc = unwind_rows_build(path, r);
    CHECK(rc == 0 && r->n > 0, "%s: rows built (%zu)", what, r->n);
    return rc == 0;
}

static void check_program(const char *dir, const char *name, const char *flags, unsigned stride)
{
    char cmd[1024], bin[512], what[64];
    snprintf(bin, sizeof(bin), "%s/%s", dir, name);
    snprintf(what, sizeof(what), "%s (%s)", name, flags);
    snprintf(cmd, sizeof(cmd), "cc %s -Wl,--build-id -o %s %s/prog.c", flags, bin, dir);
    if (!REQUIRE(sh(cmd) == 0, "%s: compiles", what))
        return;
    struct unwind_rows r;
    if (!build(bin, &r, what))
        return;
    CHECK(strlen(r.build_id) == 40, "%s: build-id %s", what, r.build_id);
    check_sorted(&r, what);
    compare_with_libdw(bin, &r, NULL, stride, what);
    check_table(&r, what);
    size_t k[5];
    count_kinds(&r, k);
    printf("INFO %s: %zu rows: END %zu, RSP %zu, RBP %zu, PLT %zu, NONE %zu\n", what, r.n, k[PT_CFA_END],
           k[PT_CFA_RSP], k[PT_CFA_RBP], k[PT_CFA_PLT], k[PT_CFA_NONE]);
    CHECK(fn_has(&r, bin, "_start", PT_CFA_END, 0), "%s: _start's return address is undefined: END", what);
    CHECK(k[PT_CFA_NONE] > 0, "%s: gaps between FDEs get NONE rows", what);
    if (strstr(flags, "-static") == NULL)
        CHECK(k[PT_CFA_PLT] > 0, "%s: the PLT gets PLT rows", what);
    if (strstr(flags, "-fno-omit-frame-pointer")) {
        size_t framed = 0;
        for (size_t i = 0; i < r.n; i++)
            framed += r.rows[i].kind == PT_CFA_RBP && r.rows[i].cfa_words == 2 && r.rows[i].rbp_words == -2;
        CHECK(framed >= 5, "%s: functions run on CFA = rbp + 16, rbp saved at CFA - 16 (%zu rows)", what, framed);
    } else {
        CHECK(fn_has(&r, bin, "big_frame", PT_CFA_RSP, 1000), "%s: an 8 KiB frame: CFA = rsp + 1000+ words", what);
        CHECK(fn_has(&r, bin, "huge_frame", PT_CFA_NONE, 0) && fn_has(&r, bin, "huge_frame", PT_CFA_RSP, 1),
              "%s: a 1 MiB frame is past 16-bit words: NONE inside, RSP at entry", what);
        CHECK(fn_has(&r, bin, "vla", PT_CFA_RBP, 2), "%s: alloca moves the CFA to rbp", what);
        CHECK(fn_has(&r, bin, "fib", PT_CFA_RSP, 2), "%s: the recursive function pushes", what);
    }
    unwind_rows_free(&r);
    CHECK(r.rows == NULL && r.n == 0, "%s: freed", what);
}

/* .debug_frame in the file, then only in a debug file named by
 * .gnu_debuglink: the same rows either way. */
static void check_debug_frame(const char *dir)
{
    char cmd[2048], bin[512], stripped[512];
    snprintf(bin, sizeof(bin), "%s/dbgf", dir);
    snprintf(stripped, sizeof(stripped), "%s/dbgf-stripped", dir);
    snprintf(cmd, sizeof(cmd),
             "set -e; cd %s; cc -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -o dbgf prog.c; "
             "objcopy --only-keep-debug dbgf dbgf.debug; "
             "objcopy --strip-debug --add-gnu-debuglink=dbgf.debug dbgf dbgf-stripped",
             dir);
    if (!REQUIRE(sh(cmd) == 0, "builds a program with its CFI in .debug_frame, and a stripped copy with a debuglink"))
        return;
    struct unwind_rows r, rs;
    if (!build(bin, &r, "dbgf"))
        return;
    check_sorted(&r, "dbgf");
    int fd = open(bin, O_RDONLY);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
    Dwarf_CFI *cfi = dw ? dwarf_getcfi(dw) : NULL;
    CHECK(cfi != NULL, "dbgf: libdw reads its .debug_frame");
    compare_with_libdw(bin, &r, cfi, 1, "dbgf (.eh_frame, then .debug_frame)");
    check_table(&r, "dbgf");
    CHECK(fn_has(&r, bin, "big_frame", PT_CFA_RSP, 1000) && fn_has(&r, bin, "vla", PT_CFA_RBP, 2),
          "dbgf: functions described only in .debug_frame have rows");
    if (dw)
        dwarf_end(dw);
    elf_end(elf);
    close(fd);
    if (build(stripped, &rs, "dbgf-stripped")) {
        CHECK(rs.n == r.n && memcmp(rs.rows, r.rows, r.n * sizeof(*r.rows)) == 0,
              "dbgf-stripped: .debug_frame found through .gnu_debuglink gives the same rows (%zu vs %zu)", rs.n,
              r.n);
        CHECK(strcmp(rs.build_id, r.build_id) == 0 && rs.build_id[0], "dbgf-stripped: same build-id");
        unwind_rows_free(&rs);
    }
    unwind_rows_free(&r);
}

static void check_no_cfi(const char *dir)
{
    char cmd[2048], path[512];
    struct unwind_rows r;
    snprintf(cmd, sizeof(cmd),
             "set -e; cd %s; cc -O2 -fno-asynchronous-unwind-tables -fno-unwind-tables -o nocfi prog.c; "
             "objcopy --remove-section .eh_frame --remove-section .eh_frame_hdr nocfi nocfi-stripped; "
             "echo 'not an ELF file' > data.txt",
             dir);
    if (!REQUIRE(sh(cmd) == 0, "builds a program without unwind tables and strips .eh_frame"))
        return;
    const char *files[] = {"nocfi-stripped", "data.txt", "does-not-exist"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        memset(&r, 0x5a, sizeof(r));
        int rc = unwind_rows_build(path, &r);
        CHECK(rc == -1 && r.rows == NULL && r.n == 0, "%s: no CFI: -1, nothing allocated", files[i]);
    }
    struct unwind_rows empty = {0};
    size_t n = 7;
    CHECK(unwind_rows_table(&empty, &n) == NULL && unwind_rows_find(&empty, 0x1000) == NULL,
          "no rows: no table, no row found");
}

/* A system library: build time, row counts, sampled agreement with libdw. */
static struct unwind_rows check_library(const char *path, const char *what, unsigned stride)
{
    struct unwind_rows r = {0};
    double t0 = now_ms();
    int rc = unwind_rows_build(path, &r);
    double t1 = now_ms();
    CHECK(rc == 0 && r.n > 0, "%s: rows built (%zu)", what, r.n);
    if (rc)
        return r;
    struct unwind_rows again;
    double t2 = now_ms();
    rc = unwind_rows_build(path, &again);
    double t3 = now_ms();
    if (rc == 0)
        unwind_rows_free(&again);
    size_t k[5];
    count_kinds(&r, k);
    printf("INFO %s: %zu rows (END %zu, RSP %zu, RBP %zu, PLT %zu, NONE %zu) built in %.1f ms (again %.1f ms)\n",
           what, r.n, k[PT_CFA_END], k[PT_CFA_RSP], k[PT_CFA_RBP], k[PT_CFA_PLT], k[PT_CFA_NONE], t1 - t0,
           t3 - t2);
    check_sorted(&r, what);
    compare_with_libdw(path, &r, NULL, stride, what);
    check_table(&r, what);
    return r;
}

int main(void)
{
    elf_version(EV_CURRENT);
    char dir[] = "/tmp/pt-unwindrows-XXXXXX", path[512], cmd[600];
    if (!REQUIRE(mkdtemp(dir), "makes a directory in /tmp"))
        return CHECK_DONE();
    snprintf(path, sizeof(path), "%s/prog.c", dir);
    FILE *f = fopen(path, "w");
    fputs(source, f);
    fclose(f);

    check_program(dir, "o2", "-O2 -fomit-frame-pointer", 1);
    check_program(dir, "o0", "-O0 -fno-omit-frame-pointer", 1);
    /* Static executables have no .eh_frame_hdr: FDEs come from .eh_frame. */
    check_program(dir, "static", "-O2 -fomit-frame-pointer -static", 3);
    check_debug_frame(dir);
    check_no_cfi(dir);

    struct unwind_rows libc = check_library(LIBC, "libc", 7);
    if (libc.n) {
        uint32_t lo, hi;
        bool end = false;
        if (fn_range(LIBC, "__clone", &lo, &hi))
            for (uint32_t pc = lo; pc < hi && !end; pc++)
                end = has_kind(&libc, pc, PT_CFA_END);
        CHECK(end, "libc: clone's child side is the outermost frame (END)");
        if (fn_range(LIBC, "__clone3", &lo, &hi)) {
            end = false;
            for (uint32_t pc = lo; pc < hi && !end; pc++)
                end = has_kind(&libc, pc, PT_CFA_END);
            CHECK(end, "libc: clone3's child side is the outermost frame (END)");
        } else {
            printf("INFO libc: no symbol for __clone3 (no debug symbols), checked clone only\n");
        }
        unwind_rows_free(&libc);
    }
    if (access(LIBJVM, R_OK) == 0) {
        struct unwind_rows jvm = check_library(LIBJVM, "libjvm", 61);
        unwind_rows_free(&jvm);
    } else {
        printf("INFO libjvm: %s not installed, skipped\n", LIBJVM);
    }

    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    sh(cmd);
    return CHECK_DONE();
}
