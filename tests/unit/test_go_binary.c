/* A Go binary read from outside: its build info's version, the version
 * table, and a real binary's DWARF (Debian's Go, built by make). */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "elfsyms.h"
#include "go_binary.h"

static bool version_of(const char *info, size_t len, char *out)
{
    return go_buildinfo_version((const unsigned char *)info, len, out, 32);
}

int main(int argc, char **argv)
{
    char v[32];
    /* 14 bytes of magic, pointer size 8, flags 2 (inline), padding to 32. */
    char info[64] = "\xff Go buildinf:\x08\x02";
    memcpy(info + 32, "\x08go1.19.8", 9);
    CHECK(version_of(info, 41, v) && strcmp(v, "go1.19.8") == 0, "the inline version is read");
    CHECK(!version_of(info, 40, v), "a version cut short by the section's end is refused");
    info[15] = 0;
    CHECK(!version_of(info, 41, v), "pointer-format build info (Go 1.17 and before) is not read");
    info[15] = 2;
    memcpy(info + 32, "\x08gq1.19.8", 9);
    CHECK(!version_of(info, 41, v), "a version not of the form go1.N is refused");
    memcpy(info + 32, "\x08go1.1\n.8", 9);
    CHECK(!version_of(info, 41, v), "a version with a control character is refused");
    memcpy(info + 32, "\xff\xff\xff\x7fgo1.19", 10);
    CHECK(!version_of(info, 42, v), "a huge length is refused");
    info[0] = 'x';
    CHECK(!version_of(info, 41, v), "no magic, no version");

    struct pt_go_layout l;
    CHECK(go_layout_of_version("go1.19.8", &l) && l.goid == 152 && l.chan_lock == 88 &&
          l.reason[PT_GO_SEMA] == 18 && l.reason[PT_GO_SELECT] == 9, "Go 1.19's table entry");
    CHECK(!go_layout_of_version("go1.21.0", &l), "a version the table does not hold");

    /* Debian's Go 1.19: the DWARF read gives the table's figures. */
    int fd = argc > 1 ? open(argv[1], O_RDONLY) : open("build/go/go_mutex", O_RDONLY);
    struct go_binary gb;
    CHECK(fd >= 0 && go_binary_read(fd, &gb) == GO_READ && gb.from_dwarf, "go_mutex is read from its DWARF");
    CHECK(go_layout_of_version(gb.version, &l) && memcmp(&l, &gb.layout, sizeof(l)) == 0,
          "its DWARF gives what the table says for its version");
    if (fd >= 0)
        close(fd);

    /* Its stripped copy (as Debian ships Go programs): no DWARF, no symbol
     * table; Go's own function table finds the same functions, and names
     * them as the symbol table did (type equality functions' array sizes,
     * [5] there, are [...] in the table). */
    struct go_binary stripped;
    fd = open("build/go/go_mutex.stripped", O_RDONLY);
    CHECK(fd >= 0 && go_binary_read(fd, &stripped) == GO_READ && !stripped.from_dwarf && stripped.from_pclntab,
          "the stripped copy is read from its version and its function table");
    CHECK(memcmp(stripped.probe_offset, gb.probe_offset, sizeof(gb.probe_offset)) == 0 && gb.probe_offset[0] &&
          !gb.from_pclntab, "the function table finds the probed functions where the symbol table does");
    if (fd >= 0)
        close(fd);
    struct elfsyms *es = elfsyms_new();
    struct elf_file *full = elfsyms_get_path(es, "build/go/go_mutex");
    elfsyms_hold(full);
    struct elf_file *bare = elfsyms_get_path(es, "build/go/go_mutex.stripped");
    size_t funcs = 0, same = 0;
    for (size_t i = 0; full && bare && i < full->nsyms; i++) {
        const struct elf_sym *s = &full->syms[i], *t;
        if (!s->func || !s->size)
            continue;
        funcs++;
        t = elfsyms_lookup(bare, s->addr + s->size / 2, true);
        /* The table has no ABI suffix (runtime.gogo for runtime.gogo.abi0). */
        size_t n = strlen(s->name);
        if (n > 5 && strcmp(s->name + n - 5, ".abi0") == 0)
            n -= 5;
        same += t && t->addr == s->addr && strlen(t->name) == n && strncmp(t->name, s->name, n) == 0;
    }
    CHECK(funcs > 1000 && same >= funcs * 99 / 100, "the stripped copy's functions are named as before (%zu of %zu)",
          same, funcs);
    CHECK(bare && elfsyms_find(bare, "main.worker") && !elfsyms_find(bare, "main.mu"),
          "functions are named, data (no table for it) is not");
    elfsyms_release(full);
    elfsyms_free(es);

    fd = open("/bin/sh", O_RDONLY);
    CHECK(fd >= 0 && go_binary_read(fd, &gb) == GO_NOT_GO, "a C program is not Go");
    if (fd >= 0)
        close(fd);
    return CHECK_DONE();
}
