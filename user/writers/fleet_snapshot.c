#include "fleet_snapshot.h"

#include <stdlib.h>
#include <string.h>

void fleet_snapshot_init(struct fleet_snapshot *s)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
}

void fleet_snapshot_swap(struct fleet_snapshot *s, enum fleet_page page, char *buf, size_t len)
{
    pthread_mutex_lock(&s->lock);
    char *old = s->buf[page];
    s->buf[page] = buf;
    s->len[page] = len;
    pthread_mutex_unlock(&s->lock);
    free(old);
}

int fleet_snapshot_copy(struct fleet_snapshot *s, enum fleet_page page, char **buf, size_t *len)
{
    int rc = -1;
    pthread_mutex_lock(&s->lock);
    if (s->buf[page] && (*buf = malloc(s->len[page] ? s->len[page] : 1))) {
        memcpy(*buf, s->buf[page], s->len[page]);
        *len = s->len[page];
        rc = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void fleet_snapshot_free(struct fleet_snapshot *s)
{
    for (int i = 0; i < FLEET_PAGES; i++)
        free(s->buf[i]);
    pthread_mutex_destroy(&s->lock);
    memset(s->buf, 0, sizeof(s->buf));
}
