/* --listen's ADDR:PORT: a numeric IPv4 address, or an IPv6 one in
 * brackets, and a port. Numeric only, so what is bound is what was
 * written: no name lookup can widen it. */
#ifndef PT_HOSTPORT_H
#define PT_HOSTPORT_H
#include <sys/socket.h>

/* Parses S into *SA and *LEN; 0, or -1 when S is not ADDR:PORT. */
int hostport_parse(const char *s, struct sockaddr_storage *sa, socklen_t *len);

#endif
