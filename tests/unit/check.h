/* A minimal test harness for tests/run.sh: one PASS/FAIL line per check, a
 * FAIL line for a failed precondition, a SKIP line for something missing,
 * and a DONE line at the end (run.sh fails a binary that never prints it). */
#ifndef PT_CHECK_H
#define PT_CHECK_H
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int check_failed, check_passed, check_skipped;

static inline void check_say(const char *what, const char *file, int line, const char *fmt, va_list ap)
{
    if (line)
        printf("%s %s:%d: ", what, file, line);
    else
        printf("%s %s: ", what, file);
    vprintf(fmt, ap);
    putchar('\n');
}

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

/* A precondition (a file written, a program built): not a check of its
 * own, so silent when it holds, one failure when it does not. Returns OK so
 * that the caller can give up: if (!REQUIRE(...)) return; */
#define REQUIRE(ok, ...) check_require((ok), __FILE__, __LINE__, __VA_ARGS__)
__attribute__((format(printf, 4, 5))) static inline bool check_require(bool ok, const char *file, int line,
                                                                        const char *fmt, ...)
{
    if (!ok) {
        va_list ap;
        va_start(ap, fmt);
        check_failed++;
        check_say("FAIL", file, line, fmt, ap);
        va_end(ap);
    }
    return ok;
}

/* Checks left out because something they need is missing: counted and said. */
#define SKIP(...) check_skip(__FILE__, __VA_ARGS__)
__attribute__((format(printf, 2, 3))) static inline void check_skip(const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    check_skipped++;
    check_say("SKIP", file, 0, fmt, ap);
    va_end(ap);
}

/* main's last word: the DONE line says the binary ran to its end. */
#define CHECK_DONE() check_done(__FILE__)
static inline int check_done(const char *file)
{
    printf("DONE %s: %d passed, %d failed, %d skipped\n", file, check_passed, check_failed, check_skipped);
    fflush(stdout);
    return check_failed ? 1 : 0;
}

#endif
