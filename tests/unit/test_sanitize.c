/* Names chosen by other processes, made safe for a terminal, collapsed
 * lines and JSON. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json.h"
#include "sanitize.h"
#include "writer.h"

static void copies(const char *in, size_t max_chars, const char *want, size_t want_chars)
{
    char out[64];
    size_t n = sanitize_copy(out, sizeof(out), in, max_chars);
    CHECK(strcmp(out, want) == 0 && n == want_chars, "copy of %zu chars gives '%s' (%zu chars, got '%s', %zu)",
          max_chars, want, want_chars, out, n);
}

/* What WRITE puts in a memory stream. */
#define WRITTEN(buf, write)                       \
    do {                                          \
        size_t len_;                              \
        FILE *f_ = open_memstream(&(buf), &len_); \
        write;                                    \
        fclose(f_);                               \
    } while (0)

static void json_gives(const char *in, const char *want, const char *what)
{
    char *buf = NULL;
    WRITTEN(buf, json_string(f_, in));
    CHECK(strcmp(buf, want) == 0, "json %s: %s (got %s)", what, want, buf);
    free(buf);
}

static void utf8(const char *in, int want_len, unsigned want_cp)
{
    uint32_t cp = 0;
    int n = sanitize_utf8_next(in, &cp);
    CHECK(n == want_len && (!n || cp == want_cp), "utf8 '%s' is %d bytes U+%04X (got %d, U+%04X)", in,
          want_len, want_cp, n, (unsigned)cp);
}

int main(void)
{
    /* The decoder: valid characters, and what must not pass as one. */
    utf8("a", 1, 'a');
    utf8("\xc3\xa9", 2, 0xe9);
    utf8("\xe2\x82\xac", 3, 0x20ac);
    utf8("\xf0\x9f\x98\x80", 4, 0x1f600);
    utf8("\xff", 0, 0);             /* never in UTF-8 */
    utf8("\x80", 0, 0);             /* a lone continuation byte */
    utf8("\xc3", 0, 0);             /* cut short by the end */
    utf8("\xc3(", 0, 0);            /* cut short by ASCII */
    utf8("\xc0\xaf", 0, 0);         /* overlong '/' */
    utf8("\xe0\x80\xaf", 0, 0);     /* overlong '/' */
    utf8("\xed\xa0\x80", 0, 0);     /* a surrogate */
    utf8("\xf4\x90\x80\x80", 0, 0); /* past U+10FFFF */

    /* Text: every control is a '?', one per byte or character. */
    copies("worker", 64, "worker", 6);
    copies("a\x1b[2Jb", 64, "a?[2Jb", 6);
    copies("row\nforged", 64, "row?forged", 10);
    copies("tab\tcr\rdel\x7f", 64, "tab?cr?del?", 11);
    copies("\xff\xfe", 64, "??", 2);
    copies("c1\xc2\x9b", 64, "c1?", 3);              /* U+009B, the 8-bit CSI */
    copies("rlo\xe2\x80\xae", 64, "rlo?", 4);        /* U+202E reverses what follows */
    copies("caf\xc3\xa9 ok", 64, "caf\xc3\xa9 ok", 7); /* printable UTF-8 stays */
    copies("abcdef", 3, "abc", 3);
    copies("\xc3\xa9\xc3\xa9\xc3\xa9", 2, "\xc3\xa9\xc3\xa9", 2);
    copies(NULL, 8, "", 0);
    char small[4];
    size_t n = sanitize_copy(small, sizeof(small), "x\xe2\x82\xac", 10);
    CHECK(n == 1 && strcmp(small, "x") == 0, "a character that does not fit whole is left out (got '%s')", small);

    char *buf = NULL;
    WRITTEN(buf, sanitize_fputs(f_, "a;b\nc\x1b", ';', ':'));
    CHECK(strcmp(buf, "a:b?c?") == 0, "fputs maps ';' and controls: %s", buf);
    free(buf);

    /* Collapsed: a name can add neither a frame, nor a line, nor a value. */
    struct pt_frame frames[] = {{.name = "evil;frame"}, {.name = "x 99\n1 2"}};
    struct pt_stack st = {.n = 2, .frames = frames};
    struct pt_model_stack line = {.root = "comm\x1b]0;t\x07", .stack = &st, .leaf = "cls\n", .count = 5};
    struct pt_model m = {.has_stacks = true, .stacks = &line, .nstacks = 1};
    const struct pt_write_opts count = {.count_value = true};
    WRITTEN(buf, write_collapsed(f_, &m, &count));
    CHECK(strcmp(buf, "comm?]0:t?;x 99?1 2;evil:frame;[cls?] 5\n") == 0, "collapsed line stays one line: %s", buf);
    free(buf);

    /* JSON: valid UTF-8, controls escaped, bad bytes as U+FFFD. */
    json_gives("plain", "\"plain\"", "plain");
    json_gives("q\"b\\", "\"q\\\"b\\\\\"", "quote and backslash");
    json_gives("n\nt\tesc\x1b", "\"n\\nt\\tesc\\u001b\"", "controls escaped");
    json_gives("del\x7f c1\xc2\x9b", "\"del\\u007f c1\\u009b\"", "DEL and C1 escaped");
    json_gives("bad\xff\xc3(", "\"bad\xef\xbf\xbd\xef\xbf\xbd(\"", "invalid bytes are U+FFFD");
    json_gives("caf\xc3\xa9", "\"caf\xc3\xa9\"", "UTF-8 kept");
    json_gives(NULL, "null", "NULL");
    return CHECK_DONE();
}
