#include "jvm_tids.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oom.h"
#include "procstatus.h"

/* As many threads as the tracker lists of one JVM. */
#define MAX_TID_PAIRS 16384

void jvm_tids_open(struct jvm_tids *m, int pid, bool in_ns)
{
    memset(m, 0, sizeof(*m));
    m->pid = pid;
    m->in_ns = in_ns;
}

void jvm_tids_close(struct jvm_tids *m)
{
    free(m->v);
    memset(m, 0, sizeof(*m));
}

static int by_ns(const void *a, const void *b)
{
    const struct tid_pair *x = a, *y = b;
    return (x->ns > y->ns) - (x->ns < y->ns);
}

static int by_host(const void *a, const void *b)
{
    const struct tid_pair *x = a, *y = b;
    return (x->host > y->host) - (x->host < y->host);
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static bool has(const int *sorted, int n, int v)
{
    return n > 0 && bsearch(&v, sorted, (size_t)n, sizeof(int), by_int) != NULL;
}

/* Whether TID is a thread of PID, as the host numbers them. */
static bool is_thread_of(int pid, int tid)
{
    char path[48];
    snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
    return tid > 0 && access(path, F_OK) == 0;
}

/* Reads the process's task list again: the pairs of threads still there
 * are kept, each new thread's namespace id read from its status (one file
 * a new thread, not one a thread). */
static void rescan(struct jvm_tids *m)
{
    char path[32];
    snprintf(path, sizeof(path), "/proc/%d/task", m->pid);
    DIR *d = opendir(path);
    if (!d)
        return;
    m->rescans++;
    /* The pairs known, by host id, to tell the new threads. */
    struct tid_pair *next = malloc(MAX_TID_PAIRS * sizeof(*next));
    if (!next)
        out_of_memory("a JVM's thread ids");
    if (m->n)
        qsort(m->v, (size_t)m->n, sizeof(*m->v), by_host);
    int n = 0;
    for (struct dirent *e; n < MAX_TID_PAIRS && (e = readdir(d));) {
        struct tid_pair key = {0, atoi(e->d_name)};
        if (key.host <= 0)
            continue;
        const struct tid_pair *old = m->n ? bsearch(&key, m->v, (size_t)m->n, sizeof(key), by_host) : NULL;
        struct procstatus ps;
        if (old)
            key.ns = old->ns;
        else if (procstatus_read(key.host, &ps) == 0 && ps.tgid == m->pid)
            key.ns = ps.nspid;
        if (key.ns > 0)
            next[n++] = key;
    }
    closedir(d);
    qsort(next, (size_t)n, sizeof(*next), by_ns);
    free(m->v);
    m->v = next;
    m->n = n;
}

static int host_of(const struct jvm_tids *m, int ns)
{
    struct tid_pair key = {ns, 0};
    const struct tid_pair *p = m->n ? bsearch(&key, m->v, (size_t)m->n, sizeof(key), by_ns) : NULL;
    return p ? p->host : 0;
}

int jvm_tids_to_host(struct jvm_tids *m, int *tids, uint64_t *threads, int n, const int *known, int nknown)
{
    bool rescanned = false;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        int host = tids[i];
        if (m->in_ns) {
            host = host_of(m, tids[i]);
            if (!host && !rescanned) {
                rescan(m);
                rescanned = true;
                host = host_of(m, tids[i]);
            }
        } else if (!has(known, nknown, host) && !is_thread_of(m->pid, host)) {
            host = 0;
        }
        if (host <= 0)
            continue;
        tids[kept] = host;
        threads[kept++] = threads[i];
    }
    return kept;
}
