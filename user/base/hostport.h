/* --listen's ADDR:PORT: a numeric IPv4 address, or an IPv6 one in
 * brackets, and a port. Numeric only, so what is bound is what was
 * written: no name lookup can widen it. */
#ifndef PT_HOSTPORT_H
#define PT_HOSTPORT_H
#include <stdbool.h>
#include <sys/socket.h>

/* Parses S into *SA and *LEN; 0, or -1 when S is not ADDR:PORT. */
int hostport_parse(const char *s, struct sockaddr_storage *sa, socklen_t *len);

/* Whether SA is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.x.x). */
bool hostport_loopback(const struct sockaddr *sa);

/* Whether an HTTP Host header (name or address, with or without a port)
 * names this machine's loopback: localhost, 127.x.x.x, [::1]. A browser
 * sent to another name (DNS rebinding) sends that name. */
bool hostport_loopback_host(const char *host);

#endif
