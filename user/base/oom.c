#include "oom.h"

#include <stdio.h>
#include <stdlib.h>

static void (*on_oom)(void);   /* main's, set once at start */

void out_of_memory_handler(void (*handler)(void))
{
    on_oom = handler;
}

_Noreturn void out_of_memory(const char *what)
{
    fprintf(stderr, "parktrace: out of memory for %s\n", what);
    if (on_oom)
        on_oom();
    abort();
}
