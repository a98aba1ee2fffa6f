/* A Go binary read from outside: its build info's version, the version
 * table, and a real binary's DWARF (Debian's Go, built by make). */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
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
    fd = open("/bin/sh", O_RDONLY);
    CHECK(fd >= 0 && go_binary_read(fd, &gb) == GO_NOT_GO, "a C program is not Go");
    if (fd >= 0)
        close(fd);
    return CHECK_DONE();
}
