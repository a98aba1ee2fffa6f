/* A minimal test harness: one PASS/FAIL line per check, for tests/run.sh. */
#ifndef PT_CHECK_H
#define PT_CHECK_H
#include <stdio.h>

static int check_failed, check_passed;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (cond) {                                                             \
            check_passed++;                                                     \
            printf("PASS %s: ", __FILE__);                                      \
        } else {                                                                \
            check_failed++;                                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                         \
        }                                                                       \
        printf(__VA_ARGS__);                                                    \
        putchar('\n');                                                          \
    } while (0)

#define CHECK_DONE() (check_failed ? 1 : 0)

#endif
