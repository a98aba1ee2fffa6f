#include "json.h"

#include <math.h>

#include "sanitize.h"

void json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    while (*s) {
        uint32_t cp;
        int n = sanitize_utf8_next(s, &cp);
        if (!n) {
            fputs("\xef\xbf\xbd", f);   /* U+FFFD for the invalid byte */
            s++;
            continue;
        }
        if (cp == '"' || cp == '\\')
            fprintf(f, "\\%c", (char)cp);
        else if (cp == '\n')
            fputs("\\n", f);
        else if (cp == '\t')
            fputs("\\t", f);
        else if (cp == '\r')
            fputs("\\r", f);
        else if (!sanitize_printable(cp))
            fprintf(f, "\\u%04x", (unsigned)cp);   /* controls never reach a terminal raw */
        else
            fwrite(s, 1, (size_t)n, f);
        s += n;
    }
    fputc('"', f);
}

void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}
