/* --listen-token FILE: the bearer token every request to --listen must
 * carry (docs/security.md). */
#ifndef PT_LISTEN_TOKEN_H
#define PT_LISTEN_TOKEN_H
#include <stdbool.h>
#include <stddef.h>

#define LISTEN_TOKEN_MAX 1024

/* Reads the token from PATH into TOKEN (LISTEN_TOKEN_MAX + 1 bytes): a
 * regular file only its owner can read or write, owned by root or by
 * parktrace's own user, holding one line of 16 to 1024 printable
 * characters without spaces (a trailing newline is dropped). 0, or -1
 * after one line on stderr. */
int listen_token_read(const char *path, char *token);

/* Whether the Authorization header value AUTH is "Bearer TOKEN", the
 * token compared in constant time. */
bool listen_token_allows(const char *token, const char *auth);

#endif
