#include <string.h>

#include "check.h"
#include "duration.h"

static void parses(const char *s, uint64_t want)
{
    uint64_t ns = 0;
    int rc = duration_parse(s, &ns);
    CHECK(rc == 0 && ns == want, "'%s' parses to %llu ns (got rc %d, %llu)", s,
          (unsigned long long)want, rc, (unsigned long long)ns);
}

static void rejects(const char *s)
{
    uint64_t ns = 0;
    CHECK(duration_parse(s, &ns) == -1, "'%s' is rejected", s);
}

static void formats(uint64_t ns, const char *want)
{
    char buf[32];
    duration_format(ns, buf, sizeof(buf));
    CHECK(strcmp(buf, want) == 0, "%llu ns formats as %s (got %s)", (unsigned long long)ns, want, buf);
}

int main(void)
{
    parses("1s", 1000000000ULL);
    parses("250ms", 250000000ULL);
    parses("2m", 120000000000ULL);
    parses("1.5s", 1500000000ULL);
    parses("100us", 100000ULL);
    parses("10ns", 10ULL);
    parses("1h", 3600000000000ULL);
    parses("3", 3000000000ULL);
    rejects("");
    rejects("abc");
    rejects("-1s");
    rejects("0");
    rejects("0s");
    rejects("1x");
    rejects("5 s");
    rejects("s");
    rejects("1e30s");
    rejects("0x10ms");   /* strtod would take hex, */
    rejects(" 1s");      /* leading blanks, */
    rejects("1e3ms");    /* exponents */
    rejects("infs");     /* and infinity */
    rejects(".");
    rejects("1..5s");
    parses(".5s", 500000000ULL);
    parses("2.ms", 2000000ULL);
    formats(950, "950ns");
    formats(12300, "12.3us");
    formats(4100000, "4.10ms");
    formats(71300000000ULL, "71.3s");
    formats(150000000000ULL, "2.50m");
    formats(7200000000000ULL, "2.00h");
    return CHECK_DONE();
}
