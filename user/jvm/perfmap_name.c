/* Perf map names as Java writes them. JDK 17 names a compiled method by
 * Method::external_name(): "RETURN-TYPE CLASS.METHOD(PARAM, PARAM)", e.g.
 * "void java.lang.Object.<init>()"; other code blobs by their own name
 * ("Interpreter", "StubRoutines (1)", "I2C/C2I adapters"). Agents write
 * "CLASS::METHOD" or "LCLASS;::METHOD", so those are understood too. */
#include "perfmap.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Writes the method token [S, END) as CLASS.METHOD. */
static void java_name(const char *s, const char *end, char *out, size_t len)
{
    size_t o = 0;
    /* A class in descriptor form, "Ljava/lang/Object;::wait". */
    const char *semi = memchr(s, ';', (size_t)(end - s));
    bool descriptor = *s == 'L' && semi && end - semi > 2 && semi[1] == ':' && semi[2] == ':';
    if (descriptor)
        s++;
    for (; s < end && o + 1 < len; s++) {
        if (descriptor && s == semi)
            continue;
        if (s[0] == ':' && s + 1 < end && s[1] == ':') {
            out[o++] = '.';
            s++;
        } else
            out[o++] = descriptor && s < semi && *s == '/' ? '.' : *s;
    }
    out[o] = '\0';
}

void perfmap_java_name(const char *name, char *out, size_t len)
{
    if (!len)
        return;
    while (blank(*name))
        name++;
    const char *end = name + strlen(name);
    while (end > name && blank(end[-1]))
        end--;
    /* The method is the last word before the parameter list; a return type,
     * when present, comes before it. Stub names have a space before any "(". */
    const char *paren = memchr(name, '(', (size_t)(end - name));
    const char *stop = paren ? paren : end;
    const char *word = stop;
    while (word > name && !blank(word[-1]))
        word--;
    bool has_dot = memchr(word, '.', (size_t)(stop - word)) != NULL;
    bool has_colons = false;
    for (const char *c = word; c + 1 < stop && !has_colons; c++)
        has_colons = c[0] == ':' && c[1] == ':';
    bool method = stop > word &&
                  (paren ? has_dot || has_colons : has_colons) &&
                  (!paren || memchr(paren, ')', (size_t)(end - paren)));
    if (method) {
        java_name(word, stop, out, len);
        return;
    }
    /* Brackets mark code that is not a Java method; keep the closing one. */
    size_t n = (size_t)(end - name), room = len > 3 ? len - 3 : 0;
    n = n < room ? n : room;
    n = n < PERFMAP_NAME_MAX ? n : PERFMAP_NAME_MAX;
    snprintf(out, len, n ? "[%.*s]" : "[unknown]", (int)n, name);
}
