#include "duration.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *suffix;
    double ns;
} units[] = {
    {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
    {"m", 60e9}, {"min", 60e9}, {"h", 3600e9},
};

/* The length of the plain decimal number at the start of S (digits, at
 * most one '.'), 0 when there is none: strtod alone also takes leading
 * blanks, hex, exponents and "inf". */
static size_t decimal_len(const char *s)
{
    static const char digits[] = "0123456789";
    size_t whole = strspn(s, digits);
    if (s[whole] != '.')
        return whole;
    size_t frac = strspn(s + whole + 1, digits);
    return whole + frac ? whole + 1 + frac : 0;
}

int duration_parse(const char *s, uint64_t *ns)
{
    char *end;
    double v;

    size_t len = s ? decimal_len(s) : 0;
    if (!len)
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end != s + len || !isfinite(v) || v <= 0)
        return -1;
    double scale = 0;
    if (*end == '\0') {
        scale = 1e9;
    } else {
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (strcmp(end, units[i].suffix) == 0)
                scale = units[i].ns;
    }
    if (scale == 0 || v * scale < 1 || v * scale > 1e18)
        return -1;
    *ns = (uint64_t)llround(v * scale);
    return 0;
}

char *duration_format(uint64_t ns, char *buf, size_t len)
{
    static const struct {
        const char *unit;
        double ns;
    } steps[] = {{"h", 3600e9}, {"m", 60e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}};
    double v = (double)ns;

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        /* Minutes and hours only past 100 s, so "71.3s" stays in seconds. */
        if (v >= steps[i].ns && (steps[i].ns < 60e9 || v >= 100e9)) {
            double x = v / steps[i].ns;
            snprintf(buf, len, x >= 100 ? "%.0f%s" : x >= 10 ? "%.1f%s" : "%.2f%s", x,
                     steps[i].unit);
            return buf;
        }
    }
    snprintf(buf, len, "%lluns", (unsigned long long)ns);
    return buf;
}
