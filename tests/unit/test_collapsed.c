/* The collapsed-stack line format flamegraph.pl reads, through the
 * collapsed writer (write_collapsed.c). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "writer.h"

int main(void)
{
    struct pt_frame frames[] = {
        {.name = "__lll_lock_wait"},
        {.name = "pthread_mutex_lock"},
        {.name = "std::map<int, int>::at(int const&)"},
        {.name = "odd;name"},
        {.name = "start_thread"},
    };
    struct pt_stack st = {.n = 5, .frames = frames};
    struct pt_stack empty = {0};
    struct pt_model_stack stacks[] = {
        {.root = "server", .stack = &st, .leaf = "pthread_mutex", .count = 1234, .own_count = 1234},
        {.root = "idle", .stack = &empty, .leaf = "futex", .count = 7, .own_count = 7},
    };
    struct pt_model m = {.has_stacks = true, .stacks = stacks, .nstacks = 2};
    const struct pt_write_opts count = {.count_value = true};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int lines = write_collapsed(f, &m, &count);
    fclose(f);
    const char *want = "server;start_thread;odd:name;std::map<int, int>::at(int const&);"
                       "pthread_mutex_lock;__lll_lock_wait;[pthread_mutex] 1234\n"
                       "idle;[futex] 7\n";
    CHECK(lines == 2 && strcmp(buf, want) == 0, "root first, leaf class last, ';' in names escaped:\n%s", buf);
    free(buf);
    return CHECK_DONE();
}
