/* What --listen serves: pages rendered by the main loop once per refresh,
 * swapped in whole under a mutex, and copied out by the serving thread. The
 * tracer never waits for a client, only for a copy of finished bytes. */
#ifndef PT_FLEET_SNAPSHOT_H
#define PT_FLEET_SNAPSHOT_H
#include <pthread.h>
#include <stddef.h>

enum fleet_page { FLEET_METRICS, FLEET_MUTEX, FLEET_BLOCK, FLEET_PAGES };

struct fleet_snapshot {
    pthread_mutex_t lock;
    char *buf[FLEET_PAGES];
    size_t len[FLEET_PAGES];
};

void fleet_snapshot_init(struct fleet_snapshot *s);

/* Puts BUF (LEN bytes, malloc'd; the snapshot takes it) in place of PAGE. */
void fleet_snapshot_swap(struct fleet_snapshot *s, enum fleet_page page, char *buf, size_t len);

/* A malloc'd copy of PAGE into *BUF and *LEN; -1 when there is none yet
 * or no memory. */
int fleet_snapshot_copy(struct fleet_snapshot *s, enum fleet_page page, char **buf, size_t *len);

void fleet_snapshot_free(struct fleet_snapshot *s);

#endif
