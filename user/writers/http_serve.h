/* --listen: libmicrohttpd serving the fleet snapshot (fleet_snapshot.h)
 * from one thread of its own, GET only, on the one address given. */
#ifndef PT_HTTP_SERVE_H
#define PT_HTTP_SERVE_H
#include <sys/socket.h>

#include "fleet_snapshot.h"

struct http_serve;

/* Binds SA (ADDR, as the user wrote it, for messages) and starts serving
 * SNAP. TOKEN (kept, not copied): every request must carry it as a bearer
 * token; NULL: requests must name a loopback host, and the pprof pages
 * (every process's stacks) are refused. NULL after one line on stderr.
 * Start it with the signals the main loop reads already blocked: its
 * threads inherit the mask. */
struct http_serve *http_serve_start(const struct sockaddr_storage *sa, socklen_t len, const char *addr,
                                    const char *token, struct fleet_snapshot *snap);

void http_serve_stop(struct http_serve *h);

#endif
