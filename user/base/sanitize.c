#include "sanitize.h"

#include <string.h>

int sanitize_utf8_next(const char *s, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    /* Lead byte: the length, the payload bits, and the smallest code point
     * that needs this length (anything below is an overlong form). */
    int n;
    uint32_t c, min;
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    } else if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2, c = p[0] & 0x1f, min = 0x80;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3, c = p[0] & 0x0f, min = 0x800;
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4, c = p[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)   /* also stops at the terminating NUL */
            return 0;
        c = c << 6 | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

bool sanitize_printable(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
        return false;
    /* LRM, RLM, ALM, the embeddings and overrides, the isolates. */
    return !(cp == 0x200e || cp == 0x200f || cp == 0x061c || (cp >= 0x202a && cp <= 0x202e) ||
             (cp >= 0x2066 && cp <= 0x2069));
}

/* How the character at S may be shown: returns how many bytes of S it
 * takes and sets *SHOWN to its bytes, or to "?" (*SHOWN_LEN 1). */
static int next_shown(const char *s, const char **shown, int *shown_len)
{
    uint32_t cp;
    int n = sanitize_utf8_next(s, &cp);
    if (n && sanitize_printable(cp)) {
        *shown = s, *shown_len = n;
        return n;
    }
    *shown = "?", *shown_len = 1;
    return n ? n : 1;
}

size_t sanitize_copy(char *out, size_t len, const char *s, size_t max_chars)
{
    size_t o = 0, chars = 0;
    if (!len)
        return 0;
    while (s && *s && chars < max_chars) {
        const char *shown;
        int n;
        int taken = next_shown(s, &shown, &n);
        if (o + (size_t)n >= len)
            break;
        memcpy(out + o, shown, (size_t)n);
        o += (size_t)n;
        s += taken;
        chars++;
    }
    out[o] = '\0';
    return chars;
}

void sanitize_fputs(FILE *f, const char *s, char from, char to)
{
    while (s && *s) {
        const char *shown;
        int n;
        s += next_shown(s, &shown, &n);
        if (from && n == 1 && *shown == from)
            fputc(to, f);
        else
            fwrite(shown, 1, (size_t)n, f);
    }
}
