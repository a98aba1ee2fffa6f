#include "hostport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int hostport_parse(const char *s, struct sockaddr_storage *sa, socklen_t *len)
{
    char host[INET6_ADDRSTRLEN + 2];
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host))
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    /* 1 to 65535, digits only. */
    const char *p = colon + 1;
    if (!*p || strlen(p) > 5 || strspn(p, "0123456789") != strlen(p))
        return -1;
    long port = strtol(p, NULL, 10);
    if (port < 1 || port > 65535)
        return -1;
    memset(sa, 0, sizeof(*sa));
    size_t n = strlen(host);
    if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
        host[n - 1] = '\0';
        if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
            return -1;
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*a6);
        return 0;
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
    if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
        return -1;
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    *len = sizeof(*a4);
    return 0;
}

static bool loopback4(const struct in_addr *a)
{
    return (ntohl(a->s_addr) >> 24) == 127;
}

static bool loopback6(const struct in6_addr *a)
{
    return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

bool hostport_loopback(const struct sockaddr *sa)
{
    /* Copied out, not read through a cast: a sockaddr_storage written as
     * one type and read as another is an aliasing the optimiser may skip. */
    if (sa->sa_family == AF_INET) {
        struct sockaddr_in a;
        memcpy(&a, sa, sizeof(a));
        return loopback4(&a.sin_addr);
    }
    if (sa->sa_family == AF_INET6) {
        struct sockaddr_in6 a;
        memcpy(&a, sa, sizeof(a));
        return loopback6(&a.sin6_addr);
    }
    return false;
}

bool hostport_loopback_host(const char *host)
{
    if (!host)
        return false;
    char name[64];
    size_t n = strlen(host);
    if (n >= sizeof(name))
        return false;
    memcpy(name, host, n + 1);
    /* The port, if any: after a bracketed IPv6 address, or the one colon. */
    char *end = name[0] == '[' ? strchr(name, ']') : strchr(name, ':');
    if (name[0] == '[') {
        if (!end || (end[1] && end[1] != ':'))
            return false;
        *end = '\0';
        memmove(name, name + 1, (size_t)(end - name));
    } else if (end) {
        *end = '\0';
    }
    struct in_addr a4;
    struct in6_addr a6;
    return !strcasecmp(name, "localhost") || (inet_pton(AF_INET, name, &a4) == 1 && loopback4(&a4)) ||
           (inet_pton(AF_INET6, name, &a6) == 1 && loopback6(&a6));
}
