#ifndef PT_GAP_TABLES_H
#define PT_GAP_TABLES_H

#include <stdint.h>

/* The tables BPF draws its geometric gaps between stacks from
 * (stacks.bpf.h, geometric_gap): FRAC[i] = log2(1 + (i + 0.5) / 256) and
 * SCALE[m] = -1 / ln(1 - 1/m) (0 for m = 1), both in Q16. */
void gap_tables_fill(uint32_t frac[], int nfrac, uint32_t scale[], int max_m);

#endif
