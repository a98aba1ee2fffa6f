#include "http_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hostport.h"
#include "listen_token.h"
#include "monotonic.h"
#include "peer_uid.h"

/* Bounded: a scraper or two and a profiler at a time. A client that
 * stalls is dropped after the idle timeout, and any request after the
 * deadline however it trickles; its connection's memory capped. No other
 * user, and no range of addresses, can take every slot: root's own
 * connections keep ROOT_SLOTS of them (docs/security.md). */
#define CONNECTIONS 16
#define ROOT_SLOTS 4
#define PER_OWNER 4           /* a user on this machine, or a /24 (/64) elsewhere */
#define TIMEOUT_S 10
#define DEADLINE_NS 10000000000ULL
#define CONN_MEMORY (32 * 1024)

/* Who a connection is charged to: a local user's uid, or a range. */
struct owner {
    bool root;
    unsigned char key[17];    /* family byte, then the uid or the range */
};

struct conn {
    int fd;                   /* -1: a free entry */
    uint64_t since;           /* the current request's start */
    struct owner who;
};

struct http_serve {
    struct MHD_Daemon *d;
    struct fleet_snapshot *snap;
    struct sockaddr_storage local;
    const char *token;        /* NULL: loopback only, no stacks */
    pthread_mutex_t lock;     /* conns, between the server's thread and the watchdog */
    struct conn conns[CONNECTIONS];
    struct owner pending;     /* the connection just accepted, until it starts */
    pthread_t watchdog;
    bool stopping, watching;
};
static const struct {
    const char *path, *type;
    enum fleet_page page;
    bool stacks;              /* served only with a token */
} pages[] = {
    {"/metrics", "text/plain; version=0.0.4; charset=utf-8", FLEET_METRICS, false},
    {"/debug/pprof/mutex", "application/octet-stream", FLEET_MUTEX, true},
    {"/debug/pprof/block", "application/octet-stream", FLEET_BLOCK, true},
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"parktrace\"");
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
    if (h->token) {
        if (!listen_token_allows(h->token, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization")))
            return reply(c, MHD_HTTP_UNAUTHORIZED, "a bearer token is needed (--listen-token)\n");
    } else if (!hostport_loopback_host(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"))) {
        /* A browser on this machine sent here by another name (DNS rebinding). */
        return reply(c, MHD_HTTP_FORBIDDEN, "loopback names only (localhost, 127.0.0.1, [::1])\n");
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0)
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
    /* A GET has no body: one sent anyway is refused, not read. */
    if (*upload_size)
        return reply(c, MHD_HTTP_BAD_REQUEST, "no body expected\n");
    for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
        if (strcmp(url, pages[i].path) != 0)
            continue;
        if (pages[i].stacks && !h->token)
            return reply(c, MHD_HTTP_FORBIDDEN, "stacks are private: start parktrace with --listen-token FILE\n");
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

/* The owner of a connection from SA: on loopback, the local user behind
 * it (one that cannot be told counts as nobody's); elsewhere its /24 or
 * /64. */
static struct owner owner_of(const struct http_serve *h, const struct sockaddr *sa)
{
    struct owner o = {.key = {(unsigned char)sa->sa_family}};
    unsigned uid;
    if (hostport_loopback(sa)) {
        if (!peer_uid(sa, (const struct sockaddr *)&h->local, &uid))
            uid = 65534;
        o.root = uid == 0;
        memcpy(o.key + 1, &uid, sizeof(uid));
    } else if (sa->sa_family == AF_INET) {
        memcpy(o.key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 3);
    } else if (sa->sa_family == AF_INET6) {
        memcpy(o.key + 1, &((const struct sockaddr_in6 *)sa)->sin6_addr, 8);
    }
    return o;
}

/* Whether a connection from SA may take a slot: at most PER_OWNER for
 * any owner but root, and ROOT_SLOTS kept for root. */
static enum MHD_Result admit(void *cls, const struct sockaddr *sa, socklen_t len)
{
    struct http_serve *h = cls;
    (void)len;
    struct owner o = owner_of(h, sa);
    int same = 0, others = 0;
    pthread_mutex_lock(&h->lock);
    for (int i = 0; i < CONNECTIONS; i++) {
        const struct conn *c = &h->conns[i];
        if (c->fd < 0)
            continue;
        same += !memcmp(c->who.key, o.key, sizeof(o.key));
        others += !c->who.root;
    }
    pthread_mutex_unlock(&h->lock);
    if (!o.root && (same >= PER_OWNER || others >= CONNECTIONS - ROOT_SLOTS))
        return MHD_NO;
    h->pending = o;
    return MHD_YES;
}

/* A connection starts (an entry, its deadline's clock) or ends. */
static void track(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode what)
{
    struct http_serve *h = cls;
    pthread_mutex_lock(&h->lock);
    if (what == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        for (int i = 0; fd && i < CONNECTIONS; i++)
            if (h->conns[i].fd < 0) {
                h->conns[i] = (struct conn){fd->connect_fd, monotonic_ns(), h->pending};
                *ctx = &h->conns[i];
                break;
            }
    } else if (*ctx) {
        /* Before the socket is closed: the watchdog never touches a reused number. */
        ((struct conn *)*ctx)->fd = -1;
        *ctx = NULL;
    }
    pthread_mutex_unlock(&h->lock);
}

/* A request answered: the connection's next one has a deadline of its own. */
static void completed(void *cls, struct MHD_Connection *c, void **req, enum MHD_RequestTerminationCode why)
{
    struct http_serve *h = cls;
    (void)req, (void)why;
    const union MHD_ConnectionInfo *ctx = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    pthread_mutex_lock(&h->lock);
    if (ctx && ctx->socket_context)
        ((struct conn *)ctx->socket_context)->since = monotonic_ns();
    pthread_mutex_unlock(&h->lock);
}

/* Shuts the sockets of requests past their deadline: the idle timeout
 * alone let a byte every few seconds hold a slot for good. */
static void *watch(void *arg)
{
    struct http_serve *h = arg;
    struct timespec tick = {0, 250000000};
    for (;;) {
        nanosleep(&tick, NULL);
        uint64_t now = monotonic_ns();
        pthread_mutex_lock(&h->lock);
        bool stop = h->stopping;
        for (int i = 0; !stop && i < CONNECTIONS; i++)
            if (h->conns[i].fd >= 0 && now - h->conns[i].since > DEADLINE_NS)
                shutdown(h->conns[i].fd, SHUT_RDWR);
        pthread_mutex_unlock(&h->lock);
        if (stop)
            return NULL;
    }
}

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_INET) {
        struct sockaddr_in x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
    }
    struct sockaddr_in6 x, y;
    memcpy(&x, a, sizeof(x));
    memcpy(&y, b, sizeof(y));
    return x.sin6_port == y.sin6_port && !memcmp(&x.sin6_addr, &y.sin6_addr, sizeof(x.sin6_addr));
}

/* The listening socket systemd passed (socket activation, parktrace.socket:
 * the port held from boot, so that no user can bind it first and serve
 * forged metrics in parktrace's place), or -2 when none was passed; -1
 * after one line when what was passed is not a TCP socket listening on
 * SA. */
static int inherited_socket(const struct sockaddr_storage *sa, const char *addr)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    if (!pid || !fds || strtol(pid, NULL, 10) != (long)getpid() || strtol(fds, NULL, 10) < 1)
        return -2;
    /* Not for the traced command parktrace may start. */
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    int fd = 3, type = 0, listening = 0;     /* SD_LISTEN_FDS_START */
    struct sockaddr_storage got = {0};
    socklen_t len = sizeof(got), tlen = sizeof(type), llen = sizeof(listening);
    if (getsockname(fd, (struct sockaddr *)&got, &len) || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &llen) || type != SOCK_STREAM || !listening ||
        !same_address(&got, sa)) {
        fprintf(stderr, "parktrace: the socket systemd passed is not one listening on %s\n", addr);
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

struct http_serve *http_serve_start(const struct sockaddr_storage *sa, socklen_t len, const char *addr,
                                    const char *token, struct fleet_snapshot *snap)
{
    int fd = inherited_socket(sa, addr);
    if (fd == -1)
        return NULL;
    if (fd == -2)
        fd = listen_on(sa, len, addr);
    if (fd < 0)
        return NULL;
    struct http_serve *h = calloc(1, sizeof(*h));
    if (!h) {
        close(fd);
        fprintf(stderr, "parktrace: out of memory for --listen\n");
        return NULL;
    }
    h->snap = snap;
    h->local = *sa;
    h->token = token;
    pthread_mutex_init(&h->lock, NULL);
    for (int i = 0; i < CONNECTIONS; i++)
        h->conns[i].fd = -1;
    /* One internal thread polls and answers every connection. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | (sa->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    h->d = MHD_start_daemon(flags, 0, admit, h, answer, h,
                            MHD_OPTION_LISTEN_SOCKET, fd,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)TIMEOUT_S,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
                            MHD_OPTION_NOTIFY_CONNECTION, track, h,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, h,
                            MHD_OPTION_END);
    if (!h->d) {
        fprintf(stderr, "parktrace: cannot serve on %s\n", addr);
        close(fd);
        free(h);
        return NULL;
    }
    h->watching = pthread_create(&h->watchdog, NULL, watch, h) == 0;
    return h;
}

void http_serve_stop(struct http_serve *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    h->stopping = true;
    pthread_mutex_unlock(&h->lock);
    if (h->watching)
        pthread_join(h->watchdog, NULL);
    /* MHD_stop_daemon closes the listening socket it was given. */
    MHD_stop_daemon(h->d);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
