/* Minimal JSON output helpers. */
#ifndef PT_JSON_H
#define PT_JSON_H
#include <stdio.h>

/* Writes S as a JSON string literal, or null when S is NULL. */
void json_string(FILE *f, const char *s);
/* Writes a finite double, or null. */
void json_number(FILE *f, double v);

#endif
