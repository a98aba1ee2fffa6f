/* Human durations: parsing "250ms"/"1.5s"/"2m" and printing "12.3ms". */
#ifndef PT_DURATION_H
#define PT_DURATION_H
#include <stddef.h>
#include <stdint.h>

/* Parses DUR, a plain decimal number (digits, at most one '.') and a unit,
 * into nanoseconds. A bare number means seconds. Returns 0 on success, -1
 * when DUR is not a positive duration written so. */
int duration_parse(const char *s, uint64_t *ns);

/* Formats NS with three significant digits and a unit: 950ns, 12.3us,
 * 4.10ms, 71.3s, 2.5m, 3.0h. Returns BUF. */
char *duration_format(uint64_t ns, char *buf, size_t len);

#endif
