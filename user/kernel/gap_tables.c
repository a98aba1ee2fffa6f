#include "gap_tables.h"

#include <math.h>

void gap_tables_fill(uint32_t frac[], int nfrac, uint32_t scale[], int max_m)
{
    for (int i = 0; i < nfrac; i++)
        frac[i] = (uint32_t)lround(65536.0 * log2(1.0 + (i + 0.5) / nfrac));
    scale[0] = scale[1] = 0;
    for (int m = 2; m <= max_m; m++)
        scale[m] = (uint32_t)lround(-65536.0 / log(1.0 - 1.0 / m));
}
