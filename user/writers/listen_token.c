#include "listen_token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_MIN 16

static int refuse(const char *path, const char *why)
{
    fprintf(stderr, "parktrace: --listen-token %s: %s\n", path, why);
    return -1;
}

int listen_token_read(const char *path, char *token)
{
    /* No link followed, no FIFO waited on: the file is root's secret. */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return refuse(path, strerror(errno));
    struct stat st;
    char buf[LISTEN_TOKEN_MAX + 2];
    ssize_t n = -1;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return refuse(path, "not a regular file");
    }
    if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 077)) {
        close(fd);
        return refuse(path, "must be readable by its owner alone (mode 0600), owned by root");
    }
    n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n < 0)
        return refuse(path, strerror(errno));
    size_t len = (size_t)n;
    if (len && buf[len - 1] == '\n')
        len--;
    if (len > LISTEN_TOKEN_MAX)
        return refuse(path, "the token is longer than 1024 characters");
    if (len < TOKEN_MIN)
        return refuse(path, "the token is shorter than 16 characters");
    for (size_t i = 0; i < len; i++)
        if (buf[i] <= ' ' || buf[i] > '~')
            return refuse(path, "the token must be one line of printable characters without spaces");
    memcpy(token, buf, len);
    token[len] = '\0';
    return 0;
}

bool listen_token_allows(const char *token, const char *auth)
{
    if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
        return false;
    const char *given = auth + 7;
    size_t want = strlen(token), have = strnlen(given, LISTEN_TOKEN_MAX + 1);
    /* Every byte of the token looked at, whatever matched. */
    unsigned char diff = have != want;
    for (size_t i = 0; i < want; i++)
        diff |= (unsigned char)(token[i] ^ (i < have ? given[i] : 0));
    return diff == 0;
}
