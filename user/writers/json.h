/* Minimal JSON output helpers. */
#ifndef PT_JSON_H
#define PT_JSON_H
#include <stdio.h>

/* Writes S as a JSON string literal, or null when S is NULL. The literal is
 * valid UTF-8 whatever S holds: a byte that is not part of a valid UTF-8
 * character becomes U+FFFD, and every control character is escaped. */
void json_string(FILE *f, const char *s);
/* Writes a finite double, or null. */
void json_number(FILE *f, double v);

#endif
