/* Unwind rows built from CFI. The independent truth is real stacks: a
 * stopped program walked with the rows, as the kernel walks, must give the
 * frames libdw's own unwinder gives and the return addresses the program
 * recorded itself. The rows are also held address by address against
 * libdw's reading of the same CFI (programs this test builds: omitted and
 * kept frame pointers, .debug_frame in the file and in a debuglink file, a
 * static executable without .eh_frame_hdr; libc and libjvm), the table
 * layout against its definition, and files without CFI are refused. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
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

/* The symbol tables the checks read, for the whole run. */
static struct elfsyms *test_syms(void)
{
    static struct elfsyms *syms;
    if (!syms)
        syms = elfsyms_new();
    return syms;
}

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
 * of bpf/parktrace.h; false when no FDE of CFI covers PC. This restates how
 * the rows read a rule, so a misreading both share passes (check_real_stack
 * catches that); what it checks on its own is coverage, every byte against
 * rows the builder made only at FDE starts and row ends. */
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

/* The row in force at PC as the table's layout (bpf/parktrace.h) defines
 * it: the pc's page entry, then the last of its rows [lo, hi] with
 * row.pc <= pc. Returns the row index, -1 for no row. A plain scan, not the
 * kernel's bounded search: what that search needs of the table (few rows a
 * page) is checked on the page entries. */
static long table_lookup(const uint64_t *t, size_t n, uint32_t pc)
{
    struct pt_utable_head h;
    struct pt_upage pg;
    memcpy(&h, &t[0], sizeof(h));
    uint32_t page = pc >> PT_UNWIND_PAGE_SHIFT;
    if (page < h.first_page || page - h.first_page >= h.npages || 1 + (size_t)(page - h.first_page) >= n)
        return -1;
    memcpy(&pg, &t[1 + page - h.first_page], sizeof(pg));
    size_t base = 1 + (size_t)h.npages;
    for (long i = pg.hi; i >= (long)pg.lo; i--)
        if (base + (size_t)i < n && entry_row(t, base + (size_t)i).pc <= pc)
            return i;
    return -1;
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
    struct elf_file *ef = elfsyms_get_path(test_syms(), bin);
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

/* ---- Real stacks. A program stops itself (SIGSTOP, traced by this test)
 * deep in a call chain through an 8 KiB frame, alloca (CFA on rbp) and a
 * recursion. Walking its stack with the rows, as the kernel does (CFA =
 * rsp or rbp + words * 8, the return address at CFA - 8, rbp restored from
 * CFA + rbp_words * 8; pc - 1 past the first frame), must give every frame
 * that two independent sources give: libdw's own unwinder on the stopped
 * process (dwfl_getthread_frames, its DWARF interpreter, not our rows), and
 * the return addresses the program's functions recorded themselves
 * (__builtin_return_address(0), no CFI involved). */
static const char *stack_source =
    "#include <alloca.h>\n#include <signal.h>\n#include <stdio.h>\n#include <string.h>\n"
    "void *ra[64]; int nra;\n"
    "#define KEEP() __asm__ volatile(\"\" ::: \"memory\")\n"
    "#define REC() (ra[nra++] = __builtin_return_address(0))\n"
    "__attribute__((noinline)) int stop_here(int x) { REC();\n"
    "  printf(\"%p %p\\n\", (void *)ra, (void *)&nra); fflush(stdout); raise(SIGSTOP); KEEP(); return x + 1; }\n"
    "__attribute__((noinline)) int in_vla(int n) { char *p = alloca(n); memset(p, n, n); REC();\n"
    "  int r = stop_here(p[n / 2]); KEEP(); return r + p[1]; }\n"
    "__attribute__((noinline)) int in_big(int n) { volatile char b[8192]; b[n] = 1; REC();\n"
    "  int r = in_vla(n + 16); KEEP(); return r + b[n / 2]; }\n"
    "__attribute__((noinline)) int recurse(int n) { REC(); int r = n ? recurse(n - 1) : in_big(n + 5); KEEP();\n"
    "  return r + n; }\n"
    "int main(int argc, char **argv) { (void)argv; return recurse(argc + 2) == 12345; }\n";

#define WALK_MAX 128
#define WALK_MAPS 64

struct walk_map {
    uint64_t start, end, bias;
    struct unwind_rows *rows;
};

struct walked {
    struct walk_map maps[WALK_MAPS];
    struct unwind_rows rows[WALK_MAPS];
    int nmaps, nrows;
    char paths[WALK_MAPS][256];
};

/* PID's executable file mappings, each with its file's rows and load bias. */
static bool walk_maps(pid_t pid, struct walked *w)
{
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    w->nmaps = w->nrows = 0;
    while (fgets(line, sizeof(line), f) && w->nmaps < WALK_MAPS) {
        unsigned long long start, end, off;
        char perms[8], file[256] = "";
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &start, &end, perms, &off, file) < 4 ||
            perms[2] != 'x' || file[0] != '/')
            continue;
        int r = 0;
        while (r < w->nrows && strcmp(w->paths[r], file))
            r++;
        if (r == w->nrows) {
            if (unwind_rows_build(file, &w->rows[r]) != 0)
                continue;
            snprintf(w->paths[r], sizeof(w->paths[r]), "%s", file);
            w->nrows++;
        }
        struct elf_file *ef = elfsyms_get_path(test_syms(), file);
        uint64_t vaddr;
        if (!ef || !elfsyms_offset_to_vaddr(ef, off, &vaddr))
            continue;
        w->maps[w->nmaps++] = (struct walk_map){start, end, start - vaddr, &w->rows[r]};
    }
    fclose(f);
    return w->nmaps > 0;
}

static bool read_word(int mem, uint64_t addr, uint64_t *v)
{
    return pread(mem, v, sizeof(*v), (off_t)addr) == (ssize_t)sizeof(*v);
}

/* The walk with the rows; true when it ends at an outermost (END) row. */
static bool rows_walk(const struct walked *w, int mem, const struct user_regs_struct *regs, uint64_t *pcs,
                      size_t *n)
{
    uint64_t ip = regs->rip, sp = regs->rsp, bp = regs->rbp;
    for (*n = 0; *n < WALK_MAX;) {
        uint64_t pc = *n ? ip - 1 : ip;
        pcs[(*n)++] = ip;
        const struct walk_map *m = NULL;
        for (int i = 0; i < w->nmaps && !m; i++)
            if (pc >= w->maps[i].start && pc < w->maps[i].end)
                m = &w->maps[i];
        const struct pt_urow *r = m ? unwind_rows_find(m->rows, (uint32_t)(pc - m->bias)) : NULL;
        if (!r || r->kind == PT_CFA_NONE)
            return false;
        if (r->kind == PT_CFA_END)
            return true;
        uint64_t cfa = r->kind == PT_CFA_RSP   ? sp + 8ull * r->cfa_words
                       : r->kind == PT_CFA_RBP ? bp + 8ull * r->cfa_words
                                               : sp + 8 + ((ip & 15) >= 11 ? 8 : 0);
        if (!read_word(mem, cfa - 8, &ip) || (r->rbp_words && !read_word(mem, cfa + 8ll * r->rbp_words, &bp)))
            return false;
        sp = cfa;
    }
    return false;
}

struct dw_frames {
    uint64_t pcs[WALK_MAX];
    size_t n;
};

static int dw_frame(Dwfl_Frame *state, void *arg)
{
    struct dw_frames *d = arg;
    Dwarf_Addr pc;
    if (d->n >= WALK_MAX || !dwfl_frame_pc(state, &pc, NULL))
        return DWARF_CB_ABORT;
    d->pcs[d->n++] = pc;
    return DWARF_CB_OK;
}

/* libdw's unwind of the stopped, traced PID. */
static bool libdw_walk(pid_t pid, struct dw_frames *d)
{
    static char *debuginfo_path;
    static const Dwfl_Callbacks cb = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .debuginfo_path = &debuginfo_path,
    };
    Dwfl *dwfl = dwfl_begin(&cb);
    d->n = 0;
    bool ok = dwfl && dwfl_linux_proc_report(dwfl, pid) == 0 && dwfl_report_end(dwfl, NULL, NULL) == 0 &&
              dwfl_linux_proc_attach(dwfl, pid, true) == 0;
    /* It returns -1 at the outermost frame too; what counts is the frames. */
    if (ok)
        dwfl_getthread_frames(dwfl, pid, dw_frame, d);
    if (dwfl)
        dwfl_end(dwfl);
    return ok && d->n > 0;
}

static void say_stacks(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    for (size_t i = 0; (i < na || i < nb) && i < 24; i++)
        printf("  frame %2zu: rows %#14llx  truth %#14llx%s\n", i, i < na ? (unsigned long long)a[i] : 0ull,
               i < nb ? (unsigned long long)b[i] : 0ull, i < na && i < nb && a[i] == b[i] ? "" : "  <--");
}

static void check_real_stack(const char *dir, const char *name, const char *flags)
{
    char cmd[1200], bin[512], src[512], what[96];
    snprintf(bin, sizeof(bin), "%s/%s", dir, name);
    snprintf(src, sizeof(src), "%s/stack.c", dir);
    snprintf(what, sizeof(what), "real stack (%s)", flags);
    FILE *f = fopen(src, "w");
    if (!REQUIRE(f && fputs(stack_source, f) >= 0 && fclose(f) == 0, "writes %s", src))
        return;
    snprintf(cmd, sizeof(cmd), "cc %s -o %s %s", flags, bin, src);
    if (!REQUIRE(sh(cmd) == 0, "%s: compiles", what))
        return;
    int out[2];
    if (!REQUIRE(pipe(out) == 0, "makes a pipe"))
        return;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execl(bin, bin, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    int st = 0;
    bool stopped = pid > 0 && waitpid(pid, &st, 0) == pid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP &&
                   ptrace(PTRACE_CONT, pid, NULL, NULL) == 0 && waitpid(pid, &st, 0) == pid && WIFSTOPPED(st) &&
                   WSTOPSIG(st) == SIGSTOP;
    FILE *o = fdopen(out[0], "r");
    unsigned long long ra_addr = 0, nra_addr = 0;
    char line[128];
    stopped = stopped && o && fgets(line, sizeof(line), o) && sscanf(line, "%llx %llx", &ra_addr, &nra_addr) == 2;
    struct user_regs_struct regs;
    char mempath[64];
    snprintf(mempath, sizeof(mempath), "/proc/%d/mem", (int)pid);
    int mem = stopped ? open(mempath, O_RDONLY) : -1;
    static struct walked w;
    uint64_t recorded[64], nra = 0;
    bool ready = REQUIRE(stopped && mem >= 0 && ptrace(PTRACE_GETREGS, pid, NULL, &regs) == 0 && walk_maps(pid, &w) &&
                             read_word(mem, nra_addr, &nra) && (nra = (uint32_t)nra) <= 64 && nra > 0 &&
                             pread(mem, recorded, nra * 8, (off_t)ra_addr) == (ssize_t)(nra * 8),
                         "%s: the program stops itself, traced, and its registers, maps and records are read", what);
    if (ready) {
        uint64_t pcs[WALK_MAX];
        size_t n = 0;
        bool whole = rows_walk(&w, mem, &regs, pcs, &n);
        static struct dw_frames d;
        bool dw = libdw_walk(pid, &d);
        CHECK(whole, "%s: the walk with the rows reaches the outermost frame (%zu frames)", what, n);
        bool same = dw && d.n == n && memcmp(d.pcs, pcs, n * sizeof(*pcs)) == 0;
        CHECK(same, "%s: libdw's unwinder gives the same %zu frames", what, d.n);
        if (!same)
            say_stacks(pcs, n, d.pcs, d.n);
        /* The recorded return addresses, innermost first, one frame each,
         * right after the frame that returns into stop_here. */
        size_t at = 0;
        while (at < n && pcs[at] != recorded[nra - 1])
            at++;
        bool in_order = at + nra <= n;
        for (size_t i = 0; in_order && i < nra; i++)
            in_order = pcs[at + i] == recorded[nra - 1 - i];
        uint64_t rev[64];
        for (size_t i = 0; i < nra; i++)
            rev[i] = recorded[nra - 1 - i];
        CHECK(in_order && at >= 2, "%s: the %llu return addresses the functions recorded are frames %zu.. in order",
              what, (unsigned long long)nra, at);
        if (!in_order)
            say_stacks(pcs + (at < n ? at : 0), at < n ? n - at : n, rev, nra);
    }
    for (int i = 0; i < w.nrows; i++)
        unwind_rows_free(&w.rows[i]);
    w.nrows = w.nmaps = 0;
    if (mem >= 0)
        close(mem);
    if (o)
        fclose(o);
    else
        close(out[0]);
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
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
    check_real_stack(dir, "stack-o2", "-O2 -fomit-frame-pointer");
    check_real_stack(dir, "stack-fp", "-O2 -fno-omit-frame-pointer");
    check_real_stack(dir, "stack-static", "-O2 -fomit-frame-pointer -static");

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
            SKIP("libc: no symbol for __clone3 (needs libc6-dbg): its child side is unchecked");
        }
        unwind_rows_free(&libc);
    }
    if (access(LIBJVM, R_OK) == 0) {
        struct unwind_rows jvm = check_library(LIBJVM, "libjvm", 61);
        unwind_rows_free(&jvm);
    } else {
        SKIP("libjvm: %s not installed (openjdk-17-jdk-headless)", LIBJVM);
    }

    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    sh(cmd);
    return CHECK_DONE();
}
