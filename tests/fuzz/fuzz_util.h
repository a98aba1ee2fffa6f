/* Shared by the fuzz targets whose parser reads a file by path: each input
 * is written to one file in a private directory made on first use, so that
 * a path the parser derives from it (a debug file next to it) stays inside
 * that directory or points at files no input can create. */
#ifndef PT_FUZZ_UTIL_H
#define PT_FUZZ_UTIL_H
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_dir[PATH_MAX], fuzz_path[PATH_MAX];

static inline void fuzz_cleanup(void)
{
    unlink(fuzz_path);
    rmdir(fuzz_dir);
}

/* Writes DATA to the file NAME in the private directory, replacing the last
 * input; returns its path. Aborts (a fuzzer failure, not a finding) when the
 * file cannot be written. */
static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *name)
{
    if (!fuzz_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/parktrace-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(fuzz_dir))
            abort();
        snprintf(fuzz_path, sizeof(fuzz_path), "%s/%s", fuzz_dir, name);
        atexit(fuzz_cleanup);
    }
    int fd = open(fuzz_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        abort();
    close(fd);
    return fuzz_path;
}

#endif
