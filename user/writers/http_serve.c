#include "http_serve.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bounded: a scraper or two and a profiler at a time; a client that stalls
 * is dropped after the timeout, its connection's memory capped. */
#define CONNECTIONS 16
#define PER_IP 8
#define TIMEOUT_S 10
#define CONN_MEMORY (32 * 1024)

struct http_serve {
    struct MHD_Daemon *d;
    struct fleet_snapshot *snap;
};

static const struct {
    const char *path, *type;
    enum fleet_page page;
} pages[] = {
    {"/metrics", "text/plain; version=0.0.4; charset=utf-8", FLEET_METRICS},
    {"/debug/pprof/mutex", "application/octet-stream", FLEET_MUTEX},
    {"/debug/pprof/block", "application/octet-stream", FLEET_BLOCK},
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* One request, answered at once from a copy of the page: the snapshot's
 * lock is held only for the copy. */
static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **req)
{
    struct http_serve *h = cls;
    (void)version, (void)upload, (void)req;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0)
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
    /* A GET has no body: one sent anyway is refused, not read. */
    if (*upload_size)
        return reply(c, MHD_HTTP_BAD_REQUEST, "no body expected\n");
    for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
        if (strcmp(url, pages[i].path) != 0)
            continue;
        char *buf;
        size_t len;
        if (fleet_snapshot_copy(h->snap, pages[i].page, &buf, &len))
            return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready\n");
        struct MHD_Response *r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            free(buf);
            return MHD_NO;
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, pages[i].type);
        enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
        MHD_destroy_response(r);
        return rc;
    }
    return reply(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* The listening socket is made here, not by libmicrohttpd, so that a bad
 * address gets its own errno in the one line. */
static int listen_on(const struct sockaddr_storage *sa, socklen_t len, const char *addr)
{
    int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0 && !setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) &&
        !bind(fd, (const struct sockaddr *)sa, len) && !listen(fd, CONNECTIONS))
        return fd;
    fprintf(stderr, "parktrace: cannot listen on %s: %s\n", addr, strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

struct http_serve *http_serve_start(const struct sockaddr_storage *sa, socklen_t len, const char *addr,
                                    struct fleet_snapshot *snap)
{
    int fd = listen_on(sa, len, addr);
    if (fd < 0)
        return NULL;
    struct http_serve *h = calloc(1, sizeof(*h));
    if (!h) {
        close(fd);
        fprintf(stderr, "parktrace: out of memory for --listen\n");
        return NULL;
    }
    h->snap = snap;
    /* One internal thread polls and answers every connection. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | (sa->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    h->d = MHD_start_daemon(flags, 0, NULL, NULL, answer, h,
                            MHD_OPTION_LISTEN_SOCKET, fd,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTIONS,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PER_IP,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)TIMEOUT_S,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
                            MHD_OPTION_END);
    if (!h->d) {
        fprintf(stderr, "parktrace: cannot serve on %s\n", addr);
        close(fd);
        free(h);
        return NULL;
    }
    return h;
}

void http_serve_stop(struct http_serve *h)
{
    if (!h)
        return;
    /* MHD_stop_daemon closes the listening socket it was given. */
    MHD_stop_daemon(h->d);
    free(h);
}
