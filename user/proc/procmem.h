/* Bounded reads of another process's memory through /proc/PID/mem. Every
 * read is a single pread: a process that exits or unmaps the range makes
 * the read fail, never crash or hang parktrace. */
#ifndef PT_PROCMEM_H
#define PT_PROCMEM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROCMEM_MAX_READ (1u << 20)

struct procmem {
    int pid;
    int fd;
};

int procmem_open(struct procmem *m, int pid);
void procmem_close(struct procmem *m);
/* Reads exactly LEN bytes (at most PROCMEM_MAX_READ); false otherwise. */
bool procmem_read(const struct procmem *m, uint64_t addr, void *buf, size_t len);
bool procmem_u64(const struct procmem *m, uint64_t addr, uint64_t *v);
/* Reads a NUL-terminated string of at most LEN-1 bytes. */
bool procmem_string(const struct procmem *m, uint64_t addr, char *buf, size_t len);

#endif
