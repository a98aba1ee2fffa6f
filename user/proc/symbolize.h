/* Names for code and data addresses of a process: ELF symbols through the
 * cached /proc/PID/maps, C++ names demangled. */
#ifndef PT_SYMBOLIZE_H
#define PT_SYMBOLIZE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "frames.h"

struct procmaps;

/* Names the code at ADDR in PID into F (caller frees with frame_free).
 * RETURN_ADDR means ADDR follows a call, so ADDR-1 is looked up. */
void symbolize_code(struct procmaps *maps, int pid, uint64_t addr, bool return_addr, struct pt_frame *f);

/* The name of the global variable covering ADDR in PID, or NULL. The
 * result is newly allocated. */
char *symbolize_data(struct procmaps *maps, int pid, uint64_t addr);

/* Demangles a C++ name into a new string; returns a copy of NAME when it
 * is not a mangled name. */
char *symbolize_demangle(const char *name);

void frame_free(struct pt_frame *f);

/* True for frames of a runtime (libc, libpthread, the dynamic loader,
 * libstdc++, the JVM itself and the JDK's own classes, Go's runtime and sync), which are never
 * the "application frame" of a wait. */
bool frame_is_runtime(const struct pt_frame *f);

/* True for frames of the C runtime only (libc, libpthread, the loader, libstdc++). */
bool frame_is_c_runtime(const struct pt_frame *f);

#endif
