/* Names chosen by other processes (thread, process, symbol and class names)
 * on their way out: sanitize.c's UTF-8 decoding, json_string and a pprof
 * profile's string table. The first
 * two input bytes pick sanitize_copy's buffer size and character limit, the
 * rest is the name. Each output is checked with the C library's own UTF-8
 * decoder: valid UTF-8, and no C0, DEL or C1 control that could move a
 * terminal's cursor or forge a line. */
#include <locale.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "json.h"
#include "pprof_strings.h"
#include "sanitize.h"

#define NAME_MAX_BYTES 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether [S, S+N) is valid UTF-8 with no control character; JSON's
 * escapes are plain ASCII, so the same check holds for its output. */
static bool clean(const char *s, size_t n)
{
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    while (n) {
        wchar_t wc;
        size_t k = mbrtowc(&wc, s, n, &st);
        if (k == (size_t)-1 || k == (size_t)-2 || k == 0 || wc < 0x20 || (wc >= 0x7f && wc < 0xa0))
            return false;
        s += k;
        n -= k;
    }
    return true;
}

/* What F wrote to its memory stream (*BUF and *LEN are set by fclose),
 * checked and freed. */
static void check_stream(FILE *f, char **buf, size_t *len, const char *forbidden)
{
    if (fclose(f) != 0 || !clean(*buf, *len) || (forbidden && memchr(*buf, *forbidden, *len)))
        abort();
    free(*buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool utf8;
    if (!utf8 && !(utf8 = setlocale(LC_CTYPE, "C.UTF-8") != NULL))
        abort();
    if (size < 2 || size > NAME_MAX_BYTES)
        return 0;
    size_t outlen = data[0] % 80 + 1, max_chars = data[1] % 80;
    char *name = malloc(size - 1), *out = malloc(outlen);
    memcpy(name, data + 2, size - 2);
    name[size - 2] = '\0';

    size_t chars = sanitize_copy(out, outlen, name, max_chars);
    if (strnlen(out, outlen) == outlen || chars > max_chars || !clean(out, strlen(out)))
        abort();

    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    sanitize_fputs(f, name, ';', ':');
    check_stream(f, &buf, &len, ";");   /* a collapsed frame stays one frame */
    f = open_memstream(&buf, &len);
    json_string(f, name);
    check_stream(f, &buf, &len, NULL);
    /* A pprof profile's string table, twice: the same index. */
    struct pprof_strings t = {0};
    int64_t i = pprof_string(&t, name);
    if (i < 0 || pprof_string(&t, name) != i || !clean(t.v[i], strlen(t.v[i])))
        abort();
    pprof_strings_free(&t);
    free(name);
    free(out);
    return 0;
}
