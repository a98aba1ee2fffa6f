/* The symbol reader (elfsyms_get): every file a traced process maps is
 * read for its symbols, and any user can map a file they wrote. The input is
 * that file, opened as procmaps_open would hand it over; its symbols are
 * then looked up by address and by name and its load segments used, as the
 * symbolizer and the JVM reader do. The cache is made afresh for each input:
 * the file keeps its inode, and a cached table would hide the next one. */
#include <string.h>

#include "elfsyms.h"
#include "fuzz_util.h"
#include "safe_open.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, "lib.so");
    struct file_ref f = {.fd = open(path, O_RDONLY | O_CLOEXEC), .name = path};
    if (f.fd < 0)
        abort();
    struct elfsyms *es = elfsyms_new();
    struct elf_file *ef = es ? elfsyms_get(es, &f) : NULL;
    close(f.fd);
    for (size_t i = 0; ef && i < ef->nsyms && i < 64; i++) {
        const struct elf_sym *s = &ef->syms[i];
        if (i && s->addr < ef->syms[i - 1].addr)
            abort();   /* the header promises them sorted */
        elfsyms_lookup(ef, s->addr, s->func);
        elfsyms_lookup(ef, s->addr + s->size, !s->func);
        if (elfsyms_find(ef, s->name) == NULL)
            abort();   /* a symbol's own name finds a symbol */
    }
    uint64_t vaddr;
    for (int i = 0; ef && i < ef->nloads; i++)
        elfsyms_offset_to_vaddr(ef, ef->loads[i].offset + ef->loads[i].filesz / 2, &vaddr);
    elfsyms_free(es);
    return 0;
}
