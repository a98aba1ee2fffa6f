/* The symbolizer on binaries this test builds: functions and globals by
 * name, C++ demangled, and a stripped copy named through its debug file. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "elfsyms.h"
#include "procmaps.h"
#include "services.h"
#include "symbolize.h"

static const char *source =
    "#include <cstdio>\n#include <unistd.h>\n"
    "static int cache_counter[4] = {5, 6, 7, 8};\n"
    "namespace store { __attribute__((noinline)) int lookup(int k) { return k + cache_counter[k & 3]; } }\n"
    "int main() { std::printf(\"%p %p\\n\", (void *)&store::lookup, (void *)&cache_counter);\n"
    "  std::fflush(stdout); char c; return (int)read(0, &c, 1) + store::lookup(1); }\n";

struct child {
    pid_t pid;
    int in;
    uint64_t fn, data;
};

static int start(const char *bin, struct child *c)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out))
        return -1;
    c->pid = fork();
    if (c->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(bin, bin, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    c->in = in[1];
    FILE *f = fdopen(out[0], "r");
    unsigned long long fn = 0, data = 0;
    int n = fscanf(f, "%llx %llx", &fn, &data);
    fclose(f);
    c->fn = fn;
    c->data = data;
    return n == 2 ? 0 : -1;
}

static void stop(struct child *c)
{
    close(c->in);
    waitpid(c->pid, NULL, 0);
}

static void expect_names(struct procmaps *maps, const char *bin, const char *what)
{
    struct child c = {0};
    if (!REQUIRE(start(bin, &c) == 0, "%s: starts %s", what, bin))
        return;
    struct pt_frame f = {0};
    symbolize_code(maps, c.pid, c.fn + 4, false, &f);
    CHECK(f.name && strcmp(f.name, "store::lookup(int)") == 0, "%s: code named store::lookup(int) (got %s)",
          what, f.name);
    frame_free(&f);
    /* A return address just past the function's start still names it. */
    symbolize_code(maps, c.pid, c.fn + 1, true, &f);
    CHECK(f.name && strcmp(f.name, "store::lookup(int)") == 0, "%s: return address looks up addr-1", what);
    CHECK(f.module && strstr(bin, f.module), "%s: module is the binary (%s)", what, f.module);
    frame_free(&f);
    char *name = symbolize_data(maps, c.pid, c.data + 8);
    CHECK(name && strcmp(name, "cache_counter") == 0, "%s: address inside a static global is named (got %s)",
          what, name);
    free(name);
    name = symbolize_data(maps, c.pid, 16);
    CHECK(name == NULL, "%s: an unmapped address has no name", what);
    free(name);
    stop(&c);
}

static int sh(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int main(void)
{
    char dir[] = "/tmp/pt-symtest-XXXXXX", cmd[1024], bin[256], stripped[256];
    if (!REQUIRE(mkdtemp(dir), "makes a directory in /tmp"))
        return CHECK_DONE();
    snprintf(cmd, sizeof(cmd), "%s/prog.cc", dir);
    FILE *f = fopen(cmd, "w");
    bool written = f && fputs(source, f) >= 0;
    written &= f && fclose(f) == 0;
    snprintf(bin, sizeof(bin), "%s/prog", dir);
    snprintf(stripped, sizeof(stripped), "%s/prog-stripped", dir);
    snprintf(cmd, sizeof(cmd), "g++ -O1 -Wl,--build-id -o %s %s/prog.cc", bin, dir);
    bool built = REQUIRE(written, "writes %s/prog.cc", dir) && REQUIRE(sh(cmd) == 0, "builds the test program");

    struct pt_services sv;
    bool have_sv = REQUIRE(services_open(&sv, NULL, NULL) == 0, "makes the symbol services");
    built &= have_sv;

    char *d = symbolize_demangle("_ZN5store6lookupEi");
    CHECK(strcmp(d, "store::lookup(int)") == 0, "demangles _ZN5store6lookupEi (got %s)", d);
    free(d);
    /* A hostile symbol table's name: 200 000 nested template arguments
     * would recurse in the demangler as deep as they nest. */
    size_t big = 200000;
    char *bomb = malloc(big + 1);
    memcpy(bomb, "_Z1fI", 5);
    for (size_t i = 5; i < big; i++)
        bomb[i] = "1aI"[i % 3];
    bomb[big] = '\0';
    d = symbolize_demangle(bomb);
    CHECK(d && strlen(d) <= 1027 && strncmp(d, "_Z1fI", 5) == 0, "a 200 KB name is cut to 1 KiB, not demangled");
    free(d);
    free(bomb);
    d = symbolize_demangle("pthread_mutex_lock@@GLIBC_2.2.5");
    CHECK(strcmp(d, "pthread_mutex_lock") == 0, "drops symbol versions (got %s)", d);
    free(d);

    if (built) {
        expect_names(sv.maps, bin, "unstripped");

        /* Strip it and keep the symbols only in a build-id debug file. */
        snprintf(cmd, sizeof(cmd),
                 "set -e; cd %s; objcopy --only-keep-debug prog prog.debug; strip -s -o prog-stripped prog; "
                 "id=$(readelf -n prog | sed -n 's/.*Build ID: //p'); mkdir -p debug/.build-id/${id%%${id#??}}; "
                 "mv prog.debug debug/.build-id/${id%%${id#??}}/${id#??}.debug",
                 dir);
        if (REQUIRE(sh(cmd) == 0, "strips the program and files its debug symbols by build-id")) {
            snprintf(cmd, sizeof(cmd), "%s/debug", dir);
            elfsyms_set_debug_root(cmd);
            expect_names(sv.maps, stripped, "stripped+build-id");
        }
        /* The programs named have exited: their maps go, not at once (their
         * stacks may still be named) but PROCMAPS_GONE_NS after. */
        size_t before, found, after, bytes;
        procmaps_usage(sv.maps, &before, &bytes);
        procmaps_forget_exited(sv.maps, 1000);
        procmaps_usage(sv.maps, &found, &bytes);
        procmaps_forget_exited(sv.maps, 1000 + PROCMAPS_GONE_NS);
        procmaps_usage(sv.maps, &after, &bytes);
        CHECK(before > 0 && found == before && after == 0,
              "exited programs' maps are kept while just exited (%zu of %zu) and let go after (%zu left)", found,
              before, after);
    }

    if (have_sv)
        services_close(&sv);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    sh(cmd);
    return CHECK_DONE();
}
