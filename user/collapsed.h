/* Collapsed stacks for flamegraph.pl: "root;...;leaf value" per line. */
#ifndef PT_COLLAPSED_H
#define PT_COLLAPSED_H
#include <stdint.h>
#include <stdio.h>
#include "stacks.h"

struct collector;

/* Writes one line: ROOT, then the frames of ST outermost first, then
 * "[LEAF]". Semicolons inside names become ':' so frames stay frames. */
void collapsed_line(FILE *f, const char *root, const struct pt_stack *st, const char *leaf,
                    uint64_t value);

/* Writes every (blocker, waiter stack) the kernel aggregated. Returns the
 * number of lines, or -1 when the file cannot be written. */
int collapsed_write(const char *path, struct collector *c, int count_value);

#endif
