/* The live view (-i on a terminal): the text report, redrawn in place. */
#include "writer.h"

int write_live(FILE *f, const struct pt_model *m, const struct pt_write_opts *o)
{
    fputs("\033[H\033[J", f);
    return write_text(f, m, o);
}
