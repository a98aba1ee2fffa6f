#include "peer_uid.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* ADDR's port and address into a diag socket id's half (network order). */
static void put_end(const struct sockaddr *sa, __be16 *port, __be32 *addr)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
        *port = a->sin_port;
        memcpy(addr, &a->sin_addr, 4);
    } else {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
        *port = a->sin6_port;
        memcpy(addr, &a->sin6_addr, 16);
    }
}

bool peer_uid(const struct sockaddr *peer, const struct sockaddr *local, unsigned *uid)
{
    if (peer->sa_family != local->sa_family || (peer->sa_family != AF_INET && peer->sa_family != AF_INET6))
        return false;
    struct {
        struct nlmsghdr h;
        struct inet_diag_req_v2 r;
    } req = {
        .h = {.nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST},
        .r = {.sdiag_family = (__u8)peer->sa_family, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u},
    };
    /* The client's socket: its source is the peer, its destination us. */
    put_end(peer, &req.r.id.idiag_sport, req.r.id.idiag_src);
    put_end(local, &req.r.id.idiag_dport, req.r.id.idiag_dst);
    req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return false;
    struct timeval tv = {.tv_usec = 100000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    union {
        struct nlmsghdr h;
        char buf[1024];
    } resp;
    bool found = false;
    if (send(fd, &req, sizeof(req), 0) == (ssize_t)sizeof(req)) {
        ssize_t n = recv(fd, &resp, sizeof(resp), 0);
        if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) && resp.h.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
            resp.h.nlmsg_len <= (size_t)n) {
            const struct inet_diag_msg *m = NLMSG_DATA(&resp.h);
            *uid = m->idiag_uid;
            found = true;
        }
    }
    close(fd);
    return found;
}
