/* The string table of a pprof profile: each distinct string once, by its
 * index, entry 0 the empty string as the format requires. Each string also
 * keeps the id of the function (and location) named by it, so a frame name
 * seen again is the same location. */
#ifndef PT_PPROF_STRINGS_H
#define PT_PPROF_STRINGS_H
#include <stddef.h>
#include <stdint.h>

struct pprof_strings {
    char **v;            /* owned copies, in index order */
    uint64_t *func;      /* per string: its function id, 0 when none yet */
    size_t n, cap;
    uint32_t *slots;     /* open-addressed hash of indexes plus one */
    size_t nslots;
};

/* The index of S as shown (cleaned as sanitize_copy cleans: valid UTF-8,
 * no control character), added when new; -1 on out of memory. */
int64_t pprof_string(struct pprof_strings *t, const char *s);

void pprof_strings_free(struct pprof_strings *t);

#endif
