/* Names from other processes (thread and process names, symbols, Java
 * classes) are chosen by their owners: before one reaches a terminal, a
 * line-based file or JSON, it goes through here. */
#ifndef PT_SANITIZE_H
#define PT_SANITIZE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The character at S (not at its end) in UTF-8: returns its length, 1 to 4,
 * and stores its code point in *CP; returns 0 when the byte at S does not
 * begin a valid shortest-form character. */
int sanitize_utf8_next(const char *s, uint32_t *cp);

/* Whether CP may be shown as it is: not a C0 or C1 control, not DEL, not a
 * bidirectional control (which could make one row look like another). */
bool sanitize_printable(uint32_t cp);

/* Writes S into OUT (LEN bytes, NUL-terminated), each byte that is not part
 * of a printable UTF-8 character as '?', and stops before MAX_CHARS
 * characters or before a character that would not fit whole. Returns the
 * number of characters written. */
size_t sanitize_copy(char *out, size_t len, const char *s, size_t max_chars);

/* Writes S to F as sanitize_copy does, whole, and FROM (an ASCII byte, or
 * 0 for none) as TO: collapsed frames turn ';' into ':'. */
void sanitize_fputs(FILE *f, const char *s, char from, char to);

#endif
