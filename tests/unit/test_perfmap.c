/* The perf map reader on files this test writes: lookups, garbage, JDK 17's
 * names, and files planted to hurt it (symlink, fifo, foreign owner, huge). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "perfmap.h"
#include "procstatus.h"

#define NOBODY 65534

static char dir[] = "/tmp/pt-perfmap-XXXXXX";

/* A precondition of the check that calls it, which gives up when it fails. */
static bool write_file(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    if (fd >= 0)
        close(fd);
    return REQUIRE(ok, "writes %s", path);
}

static const char *name_at(const struct perfmap *pm, uint64_t pc)
{
    const struct perfmap_entry *e = perfmap_find(pm, pc);
    return e ? e->name : "(none)";
}

static void check_parsing(void)
{
    char path[64], err[256];
    snprintf(path, sizeof(path), "%s/parse.map", dir);
    /* Out of order, as JDK 17 writes its code heaps; garbage between. */
    static const char text[] =
        "0x00007f7749404e80 0x0000000000000510 void java.lang.invoke.MethodType$ConcurrentWeakInternSet.expungeStaleElements()\n"
        "0x00007f7750940b80 0x0000000000017de0 Interpreter\n"
        "garbage line\n"
        "\n"
        "0x00007f7750938c00 0x0000000000007530 StubRoutines (1)\r\n"
        "0x1000 0x0 zero-sized\n"
        "0xffffffffffffff00 0x1000 wraps around\n"
        "0x00000000000012345 0x10 seventeen digits\n"
        "0x2000 0x10\n"
        "0x3000 zz not hex\n"
        "-0x4000 0x10 negative\n"
        "0x5000x0x10 no blank\n"
        "1000   40\t  plain hex, extra blanks  \n"
        "0x00007f77494021c0 0x00000000000002f0 java.util.concurrent.ConcurrentHashMap$Node "
        "java.util.concurrent.ConcurrentHashMap.tabAt(java.util.concurrent.ConcurrentHashMap$Node[], int)";
    if (!write_file(path, text, sizeof(text) - 1))
        return;

    struct perfmap pm;
    int rc = perfmap_load_file(&pm, path, getuid(), err, sizeof(err));
    CHECK(rc == 0, "loads a map with garbage lines (%s)", rc ? err : "ok");
    CHECK(pm.n == 5, "keeps the 5 good lines, skips the 9 bad ones (%d)", pm.n);
    int sorted = 1;
    for (int i = 1; i < pm.n; i++)
        sorted &= pm.e[i - 1].start <= pm.e[i].start;
    CHECK(sorted, "entries are sorted by start");
    CHECK(strcmp(name_at(&pm, 0x1000), "plain hex, extra blanks") == 0, "hex without 0x, blanks trimmed (%s)",
          name_at(&pm, 0x1000));
    CHECK(strcmp(name_at(&pm, 0x103f), "plain hex, extra blanks") == 0, "the last byte is inside");
    CHECK(!perfmap_find(&pm, 0x1040), "the end is outside");
    CHECK(!perfmap_find(&pm, 0xfff), "before the first entry: nothing");
    CHECK(!perfmap_find(&pm, 0x7f7750940b80ull + 0x17de0), "past the last entry: nothing");
    CHECK(strcmp(name_at(&pm, 0x7f7750938c00ull), "StubRoutines (1)") == 0, "CRLF line end dropped (%s)",
          name_at(&pm, 0x7f7750938c00ull));
    CHECK(strcmp(name_at(&pm, 0x7f7750940b80ull + 0x100), "Interpreter") == 0, "inside the interpreter");
    CHECK(strstr(name_at(&pm, 0x7f77494021c0ull + 0x2ef), "ConcurrentHashMap.tabAt(") != NULL,
          "a last line without a newline is read");
    CHECK(!perfmap_find(&pm, 0x7f7749404e80ull + 0x510), "the gap between two blobs is nothing");
    perfmap_free(&pm);

    /* An empty map is a map with no entries. */
    if (!write_file(path, "", 0))
        return;
    rc = perfmap_load_file(&pm, path, getuid(), err, sizeof(err));
    CHECK(rc == 0 && pm.n == 0 && !perfmap_find(&pm, 0x1000), "an empty file loads, finds nothing");
    perfmap_free(&pm);
}

static void check_overlaps_and_long_names(void)
{
    char path[64], err[256];
    snprintf(path, sizeof(path), "%s/overlap.map", dir);
    size_t big = 100000;
    char *text = malloc(big + 256);
    /* An old big blob, a newer one inside it, one straddling its end, a
     * duplicate start (the later line wins), and a 99 990-byte name. */
    int n = snprintf(text, big, "1000 1000 old\n1400 100 newer inside\n1f00 200 straddling\n"
                                "3000 10 first\n3000 10 second\n4000 10 ");
    memset(text + n, 'x', big - (size_t)n - 1);
    memcpy(text + big - 1, "\n5000 10 after\n", 15);
    bool written = write_file(path, text, big + 14);
    free(text);
    if (!written)
        return;

    struct perfmap pm;
    int rc = perfmap_load_file(&pm, path, getuid(), err, sizeof(err));
    CHECK(rc == 0 && pm.n == 7, "loads overlapping entries (%d, %s)", pm.n, rc ? err : "ok");
    CHECK(strcmp(name_at(&pm, 0x1000), "old") == 0, "old blob before the newer one");
    CHECK(strcmp(name_at(&pm, 0x1450), "newer inside") == 0, "the later line wins inside it");
    CHECK(strcmp(name_at(&pm, 0x1800), "old") == 0, "old blob after the newer one (%s)", name_at(&pm, 0x1800));
    CHECK(strcmp(name_at(&pm, 0x1f80), "straddling") == 0, "a later straddling blob wins");
    CHECK(strcmp(name_at(&pm, 0x2080), "straddling") == 0, "past the old blob's end");
    CHECK(strcmp(name_at(&pm, 0x3008), "second") == 0, "same start: the later line wins");
    const char *longname = name_at(&pm, 0x4000);
    CHECK(strlen(longname) == PERFMAP_NAME_MAX - 1 && longname[0] == 'x', "an overlong name is cut to %d bytes (%zu)",
          PERFMAP_NAME_MAX - 1, strlen(longname));
    CHECK(strcmp(name_at(&pm, 0x5000), "after") == 0, "the line after an overlong one is read");
    perfmap_free(&pm);

    /* Control bytes and a NUL inside a name do not cut or corrupt it. */
    static const char ctl[] = "6000 10 a\tb\001c\000d\n";
    if (!write_file(path, ctl, sizeof(ctl) - 1))
        return;
    rc = perfmap_load_file(&pm, path, getuid(), err, sizeof(err));
    CHECK(rc == 0 && pm.n == 1 && strcmp(pm.e[0].name, "a?b?c?d") == 0, "control bytes become '?' (%s)",
          pm.n ? pm.e[0].name : "-");
    perfmap_free(&pm);
}

static void expect_name(const char *perf_name, const char *want)
{
    char out[256];
    perfmap_java_name(perf_name, out, sizeof(out));
    CHECK(strcmp(out, want) == 0, "'%s' -> '%s' (got '%s')", perf_name, want, out);
}

static void check_names(void)
{
    /* Shapes from JDK 17.0.15's Compiler.perfmap. */
    expect_name("void java.util.concurrent.locks.ReentrantLock.lock()", "java.util.concurrent.locks.ReentrantLock.lock");
    expect_name("java.lang.Object jdk.internal.misc.Unsafe.getReferenceVolatile(java.lang.Object, long)",
                "jdk.internal.misc.Unsafe.getReferenceVolatile");
    expect_name("void java.lang.Object.<init>()", "java.lang.Object.<init>");
    expect_name("java.lang.Class[] java.lang.invoke.MethodType.ptypes()", "java.lang.invoke.MethodType.ptypes");
    expect_name("java.util.concurrent.ConcurrentHashMap$Node java.util.concurrent.ConcurrentHashMap.tabAt("
                "java.util.concurrent.ConcurrentHashMap$Node[], int)",
                "java.util.concurrent.ConcurrentHashMap.tabAt");
    expect_name("void ParkedThreads$$Lambda$14/0x0000000800c03000.run()", "ParkedThreads$$Lambda$14/0x0000000800c03000.run");
    expect_name("int java.lang.invoke.LambdaForm$Name.index()", "java.lang.invoke.LambdaForm$Name.index");
    expect_name("void Main.main(java.lang.String[])", "Main.main");
    /* Code that is not a Java method. */
    expect_name("Interpreter", "[Interpreter]");
    expect_name("StubRoutines (1)", "[StubRoutines (1)]");
    expect_name("I2C/C2I adapters", "[I2C/C2I adapters]");
    expect_name("monitorenter_nofpu Runtime1 stub", "[monitorenter_nofpu Runtime1 stub]");
    expect_name("_new_array_Java", "[_new_array_Java]");
    expect_name("", "[unknown]");
    /* Agents' shapes, and a tier marker after the parameters. */
    expect_name("java.util.concurrent.locks.ReentrantLock::lock()V", "java.util.concurrent.locks.ReentrantLock.lock");
    expect_name("Ljava/lang/Object;::wait", "java.lang.Object.wait");
    expect_name("void java.lang.Thread.run() [c2]", "java.lang.Thread.run");

    char small[8];
    perfmap_java_name("void java.lang.Thread.run()", small, sizeof(small));
    CHECK(strcmp(small, "java.la") == 0, "a small buffer gets a cut name (%s)", small);
    perfmap_java_name("Interpreter", small, sizeof(small));
    CHECK(strcmp(small, "[Inter]") == 0, "a cut stub name keeps its brackets (%s)", small);
}

static void expect_refused(const char *path, uid_t owner, const char *why, const char *what)
{
    struct perfmap pm;
    char err[256] = "";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = perfmap_load_file(&pm, path, owner, err, sizeof(err));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK(rc == -1 && strstr(err, why) && pm.n == 0 && !pm.e, "%s is refused: %s", what, err);
    CHECK(s < 1, "%s: refused at once (%.3f s)", what, s);
}

static void check_hostile(void)
{
    char good[64], path[64], err[256];
    snprintf(good, sizeof(good), "%s/good.map", dir);
    snprintf(path, sizeof(path), "%s/link.map", dir);
    if (!write_file(good, "1000 10 x\n", 10) || !REQUIRE(symlink(good, path) == 0, "makes a symlink"))
        return;
    expect_refused(path, getuid(), "symlink", "a symlink to a good map");

    snprintf(path, sizeof(path), "%s/fifo.map", dir);
    if (!REQUIRE(mkfifo(path, 0644) == 0, "makes a fifo"))
        return;
    expect_refused(path, getuid(), "not a regular file", "a fifo nobody writes to");

    expect_refused(dir, getuid(), "not a regular file", "a directory");

    snprintf(path, sizeof(path), "%s/nobody.map", dir);
    if (!write_file(path, "1000 10 x\n", 10) || !REQUIRE(chown(path, NOBODY, NOBODY) == 0, "chowns a map to nobody"))
        return;
    expect_refused(path, getuid(), "owned by uid 65534", "a map owned by another user");
    struct perfmap pm;
    int rc = perfmap_load_file(&pm, path, NOBODY, err, sizeof(err));
    CHECK(rc == 0 && pm.n == 1, "the same map is accepted from a JVM running as nobody (%s)", rc ? err : "ok");
    perfmap_free(&pm);
    CHECK(chown(good, NOBODY, NOBODY) == 0 && chown(good, 0, 0) == 0 &&
              perfmap_load_file(&pm, good, NOBODY, err, sizeof(err)) == 0,
          "a root-owned map is accepted from any JVM");
    perfmap_free(&pm);

    snprintf(path, sizeof(path), "%s/huge.map", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    bool made = fd >= 0 && ftruncate(fd, PERFMAP_MAX_BYTES + 1) == 0;
    if (fd >= 0)
        close(fd);
    if (!REQUIRE(made, "makes a sparse 64 MiB + 1 file"))
        return;
    expect_refused(path, getuid(), "more than the 64 MiB", "an oversized map");
    expect_refused("/nonexistent/perf-1.map", getuid(), "No such file", "a missing map");
}

/* The real path: /proc/PID/root/tmp/perf-<nspid>.map of a live process. */
static void check_by_pid(void)
{
    struct procstatus ps;
    CHECK(procstatus_read(getpid(), &ps) == 0 && ps.nspid == getpid() && ps.euid == geteuid() &&
              ps.egid == getegid(),
          "reads its own status (nspid %d, euid %u)", ps.nspid, (unsigned)ps.euid);
    CHECK(procstatus_read(-1, &ps) == -1 && errno == ENOENT, "no status for pid -1");

    char path[64], err[256];
    snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
    unlink(path);
    struct perfmap pm;
    int rc = perfmap_load(&pm, getpid(), err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "No such file"), "no map yet: %s", err);
    static const char line[] = "0x00007f0000001000 0x0000000000000100 void Main.main(java.lang.String[])\n";
    if (!write_file(path, line, sizeof(line) - 1))
        return;
    rc = perfmap_load(&pm, getpid(), err, sizeof(err));
    CHECK(rc == 0 && pm.n == 1, "loads its own map through /proc/%d/root/tmp (%s)", getpid(), rc ? err : "ok");
    char name[64];
    const struct perfmap_entry *e = perfmap_find(&pm, 0x7f0000001080ull);
    perfmap_java_name(e ? e->name : "", name, sizeof(name));
    CHECK(strcmp(name, "Main.main") == 0, "finds and names a pc in it (%s)", name);
    perfmap_free(&pm);
    unlink(path);
    rc = perfmap_load(&pm, 0, err, sizeof(err));
    CHECK(rc == -1 && err[0], "pid 0 is refused: %s", err);
}

/* A process in a chroot whose /tmp is an absolute symlink: the map is found
 * inside its root, as the process itself sees it, never in ours. */
static void check_in_chroot(void)
{
    char root[96], path[160], err[256];
    snprintf(root, sizeof(root), "%s/root", dir);
    snprintf(path, sizeof(path), "%s/inner", root);
    if (!REQUIRE(mkdir(root, 0755) == 0 && mkdir(path, 01777) == 0, "makes a root with /inner"))
        return;
    snprintf(path, sizeof(path), "%s/tmp", root);
    int ready[2];
    if (!REQUIRE(symlink("/inner", path) == 0, "its /tmp is a symlink to /inner") ||
        !REQUIRE(pipe(ready) == 0, "makes a pipe"))
        return;
    pid_t child = fork();
    if (child == 0) {
        char c = chroot(root) == 0 && chdir("/") == 0 ? 'y' : 'n';
        (void)!write(ready[1], &c, 1);
        pause();
        _exit(0);
    }
    char c = 0;
    snprintf(path, sizeof(path), "%s/inner/perf-%d.map", root, child);
    if (REQUIRE(read(ready[0], &c, 1) == 1 && c == 'y', "a child runs chrooted there") &&
        write_file(path, "2000 10 inside\n", 15)) {
        struct perfmap pm;
        int rc = perfmap_load(&pm, child, err, sizeof(err));
        CHECK(rc == 0 && pm.n == 1 && strcmp(pm.e[0].name, "inside") == 0, "its map is read from its own root (%s)",
              rc ? err : "ok");
        perfmap_free(&pm);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(ready[0]);
    close(ready[1]);
}

/* The entry a lookup must find, by definition: among those containing PC,
 * the one from the latest line. */
static const struct perfmap_entry *linear_find(const struct perfmap *pm, uint64_t pc)
{
    const struct perfmap_entry *best = NULL;
    for (int i = 0; i < pm->n; i++)
        if (pm->e[i].start <= pc && pc < pm->e[i].end && (!best || pm->e[i].line > best->line))
            best = &pm->e[i];
    return best;
}

static uint64_t rnd(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* The span index against the definition, on random maps full of overlaps,
 * at every edge and between. */
static void check_index_against_linear(void)
{
    char path[64], err[256], line[64];
    snprintf(path, sizeof(path), "%s/random.map", dir);
    uint64_t state = 88172645463325252ULL;
    int wrong = 0, lookups = 0;
    for (int round = 0; round < 200; round++) {
        int lines = 1 + (int)(rnd(&state) % 60);
        size_t cap = (size_t)lines * sizeof(line), len = 0;
        char *text = malloc(cap);
        for (int i = 0; i < lines; i++) {
            uint64_t start = rnd(&state) % 0x400, size = 1 + rnd(&state) % (i % 7 == 0 ? 0x400 : 0x40);
            len += (size_t)snprintf(text + len, cap - len, "%llx %llx e%d\n", (unsigned long long)start,
                                    (unsigned long long)size, i);
        }
        bool written = write_file(path, text, len);
        free(text);
        if (!written)
            return;
        struct perfmap pm;
        if (perfmap_load_file(&pm, path, getuid(), err, sizeof(err)) != 0) {
            wrong++;
            continue;
        }
        for (uint64_t pc = 0; pc < 0x900; pc++, lookups++)
            wrong += perfmap_find(&pm, pc) != linear_find(&pm, pc);
        wrong += perfmap_find(&pm, UINT64_MAX) != NULL;
        perfmap_free(&pm);
    }
    CHECK(wrong == 0, "the index finds what a linear search finds (%d of %d lookups differ)", wrong, lookups);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Two million entries under one that spans them all: the case that made the
 * old lookup walk back over every entry (3.6 ms each). */
static void check_lookup_time(void)
{
    char path[64], err[256];
    snprintf(path, sizeof(path), "%s/big.map", dir);
    enum { N = 2000000 };
    size_t cap = (size_t)N * 24 + 64, len = 0;
    char *text = malloc(cap);
    len += (size_t)snprintf(text, cap, "10000 %x all\n", N * 0x40);
    for (int i = 1; i < N; i++)
        len += (size_t)snprintf(text + len, cap - len, "%x 20 m%x\n", 0x10000 + i * 0x40, i);
    bool written = write_file(path, text, len);
    free(text);
    if (!written)
        return;
    struct perfmap pm;
    double t0 = seconds();
    int rc = perfmap_load_file(&pm, path, getuid(), err, sizeof(err));
    double load = seconds() - t0;
    CHECK(rc == 0 && pm.n == N, "loads %d entries in %.2f s (%s)", pm.n, load, rc ? err : "ok");
    if (rc)
        return;
    uint64_t state = 1, found = 0;
    enum { LOOKUPS = 1000000 };
    t0 = seconds();
    for (int i = 0; i < LOOKUPS; i++) {
        const struct perfmap_entry *e = perfmap_find(&pm, 0x10000 + rnd(&state) % ((uint64_t)N * 0x40));
        found += e != NULL;
    }
    double ns = (seconds() - t0) / LOOKUPS * 1e9;
    CHECK(found == LOOKUPS && ns < 2000, "a lookup among %d overlapping entries takes %.0f ns", N, ns);
    CHECK(strcmp(name_at(&pm, 0x10000 + 0x40 * 5 + 0x30), "all") == 0 &&
          strcmp(name_at(&pm, 0x10000 + 0x40 * 5 + 0x10), "m5") == 0, "the newer line wins, the old one fills gaps");

    /* All maps together are bounded: a second and third copy would pass 256 MiB. */
    struct perfmap more[4];
    int loaded = 0;
    for (int i = 0; i < 4 && perfmap_load_file(&more[loaded], path, getuid(), err, sizeof(err)) == 0; i++)
        loaded++;
    CHECK(loaded < 4 && strstr(err, "256 MiB"), "perf maps held together are bounded (%d more loaded: %s)", loaded,
          err);
    while (loaded)
        perfmap_free(&more[--loaded]);
    perfmap_free(&pm);
    CHECK(perfmap_load_file(&pm, path, getuid(), err, sizeof(err)) == 0, "freed maps give their room back");
    perfmap_free(&pm);
    unlink(path);
}

int main(void)
{
    if (!REQUIRE(mkdtemp(dir), "makes a directory in /tmp"))
        return CHECK_DONE();
    check_parsing();
    check_overlaps_and_long_names();
    check_index_against_linear();
    check_lookup_time();
    check_names();
    check_hostile();
    check_by_pid();
    check_in_chroot();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    REQUIRE(system(cmd) == 0, "cleans up");
    return CHECK_DONE();
}
