/* A Go binary read from outside: its Go version and what the kernel
 * needs to read its goroutines' parks (bpf/go_uprobes.bpf.h). */
#ifndef PT_GO_BINARY_H
#define PT_GO_BINARY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/parktrace.h"

enum go_binary_result {
    GO_NOT_GO,          /* no Go build info: not a Go program */
    GO_READ,            /* a Go program whose parks can be read */
    GO_UNSUPPORTED,     /* Go, but neither DWARF nor the version table gives its layout */
};

/* The runtime functions probed, in this order. */
enum go_probe { GO_PROBE_SEMACQUIRE, GO_PROBE_PARK, GO_PROBE_READY, GO_PROBE_COUNT };
extern const char *const go_probe_names[GO_PROBE_COUNT];

struct go_binary {
    char version[32];           /* "go1.19.8", as its build info says */
    bool from_dwarf;            /* the layout read from its DWARF, else from the version table */
    bool from_pclntab;          /* its functions found in Go's own table: no symbol table */
    struct pt_go_layout layout;
    uint64_t probe_offset[GO_PROBE_COUNT];   /* file offsets of go_probe_names */
};

/* Reads the ELF file open at FD (another user's, never mapped) into *OUT. */
enum go_binary_result go_binary_read(int fd, struct go_binary *out);

/* The layout of Go VERSION ("go1.19.8") without DWARF, from the table in
 * docs/go.md; false when the version is not in it. */
bool go_layout_of_version(const char *version, struct pt_go_layout *out);

/* The Go version in build info section BUF of LEN bytes into VERSION. */
bool go_buildinfo_version(const unsigned char *buf, size_t len, char *version, size_t cap);

#endif
