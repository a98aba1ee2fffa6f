/* The kernel's text symbols, from /proc/kallsyms, read once when first
 * asked for: names for the kernel frames where a wait chain ends in I/O
 * (its end_frame). */
#ifndef PT_KALLSYMS_H
#define PT_KALLSYMS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kallsyms {
    bool tried;           /* loaded, or found unreadable: not read again */
    uint64_t *addr;       /* sorted */
    uint32_t *name_at;    /* each one's name, an offset into names */
    char *names;
    size_t n;
};

/* Reads the table into K unless already tried. */
void kallsyms_load(struct kallsyms *k);

/* The function ADDR lies in, NULL when unknown (no table: kernel
 * addresses hidden, say). Valid until kallsyms_free. */
const char *kallsyms_name(const struct kallsyms *k, uint64_t addr);

void kallsyms_free(struct kallsyms *k);

#endif
