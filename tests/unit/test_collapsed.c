/* The collapsed-stack line format flamegraph.pl reads. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "collapsed.h"

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
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    collapsed_line(f, "server", &st, "pthread_mutex", 1234);
    struct pt_stack empty = {0};
    collapsed_line(f, "idle", &empty, "futex", 7);
    fclose(f);
    const char *want = "server;start_thread;odd:name;std::map<int, int>::at(int const&);"
                       "pthread_mutex_lock;__lll_lock_wait;[pthread_mutex] 1234\n"
                       "idle;[futex] 7\n";
    CHECK(strcmp(buf, want) == 0, "root first, leaf class last, ';' in names escaped:\n%s", buf);
    free(buf);
    return CHECK_DONE();
}
