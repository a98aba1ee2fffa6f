#include "hostport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

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
