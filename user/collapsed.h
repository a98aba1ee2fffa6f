/* Collapsed stacks for flamegraph.pl: "root;...;leaf value" per line. */
#ifndef PT_COLLAPSED_H
#define PT_COLLAPSED_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "stacks.h"

struct collector;

/* Writes one line: ROOT, then the frames of ST outermost first, then
 * "[LEAF]", then " VALUE". Semicolons inside names become ':' so frames
 * stay frames, and controls '?' so a line stays a line (sanitize.h). */
void collapsed_line(FILE *f, const char *root, const struct pt_stack *st, const char *leaf,
                    uint64_t value);

/* The same, followed by a "--" frame and the waker's stack innermost frame
 * first, ending in WAKER_ROOT (the waker's process), as offwaketime writes it. */
void collapsed_waker_line(FILE *f, const char *root, const struct pt_stack *st, const char *leaf,
                          const struct pt_stack *waker, const char *waker_root, uint64_t value);

/* Writes to F every (blocker, waiter stack) the kernel aggregated; with
 * WAKER, every (blocker, waiter stack, waker stack) first, and each waiter
 * stack's line keeps only the waits no waker was seen for. Returns the
 * number of lines, or -1 when a write failed (errno says why). */
int collapsed_write(FILE *f, struct collector *c, int count_value, bool waker);

#endif
