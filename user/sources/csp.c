#include "csp.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/parktrace.h"

void csp_init(struct csp *c, int procs_fd, uint64_t run_start)
{
    memset(c, 0, sizeof(*c));
    c->fd = procs_fd;
    c->run_start = run_start;
    c->p = calloc(CSP_MAX_PROCS, sizeof(*c->p));
}

static struct csp_proc *find(const struct csp *c, int pid)
{
    for (int i = 0; i < c->n; i++)
        if (c->p[i].pid == pid)
            return &c->p[i];
    return NULL;
}

static int64_t count_threads(int pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *d = opendir(path);
    int64_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

void csp_watch(struct csp *c, int pid, uint64_t now)
{
    if (!c->p || c->n == CSP_MAX_PROCS || find(c, pid))
        return;
    /* Entered before the threads are counted, so a thread born in between
     * is counted by the kernel rather than lost. */
    struct pt_proc pr = {0};
    uint32_t key = (uint32_t)pid;
    if (bpf_map_update_elem(c->fd, &key, &pr, BPF_NOEXIST))
        return;
    int64_t n = count_threads(pid);
    if (n <= 0) {
        bpf_map_delete_elem(c->fd, &key);
        return;
    }
    struct pt_proc cur;
    if (bpf_map_lookup_elem(c->fd, &key, &cur))
        return;
    /* The kernel has counted births and deaths since the entry was made:
     * the threads that existed before are the count minus that balance. */
    n -= cur.threads;
    cur.threads += n;
    cur.births_ns += (uint64_t)n * now;
    bpf_map_update_elem(c->fd, &key, &cur, BPF_EXIST);
    struct csp_proc *p = &c->p[c->n++];
    p->pid = pid;
    p->before_ns = (uint64_t)(n > 0 ? n : 0) * (now > c->run_start ? now - c->run_start : 0);
    p->window_alive = 0;
}

static bool alive_now(const struct csp *c, const struct csp_proc *p, uint64_t now, uint64_t *alive)
{
    struct pt_proc pr;
    uint32_t key = (uint32_t)p->pid;
    if (bpf_map_lookup_elem(c->fd, &key, &pr))
        return false;
    int64_t threads = pr.threads > 0 ? pr.threads : 0;
    uint64_t plus = (uint64_t)threads * now + pr.deaths_ns;
    *alive = p->before_ns + (plus > pr.births_ns ? plus - pr.births_ns : 0);
    return true;
}

/* PID's alive time at NOW, and its entry; from the memo when asked before
 * at the same NOW. */
static const struct csp_proc *alive_of(struct csp *c, int pid, uint64_t now, uint64_t *alive)
{
    struct csp_memo *m = &c->memo[(unsigned)pid % CSP_MEMO];
    if (m->pid != pid || m->now != now || !now) {
        m->pid = pid;
        m->now = now;
        m->p = find(c, pid);
        m->ok = m->p && alive_now(c, m->p, now, &m->alive);
    }
    *alive = m->alive;
    return m->ok ? m->p : NULL;
}

bool csp_alive(struct csp *c, int pid, uint64_t now, uint64_t *alive)
{
    return alive_of(c, pid, now, alive) != NULL;
}

bool csp_alive_window(struct csp *c, int pid, uint64_t now, uint64_t *alive)
{
    uint64_t a;
    const struct csp_proc *p = alive_of(c, pid, now, &a);
    if (!p)
        return false;
    *alive = a > p->window_alive ? a - p->window_alive : 0;
    return true;
}

void csp_roll(struct csp *c, uint64_t now)
{
    for (int i = 0; i < c->n; i++)
        alive_now(c, &c->p[i], now, &c->p[i].window_alive);
}

bool csp_value(uint64_t wait_ns, uint64_t alive_ns, uint64_t idle_ns, double *out)
{
    if (alive_ns <= idle_ns)
        return false;
    double v = (double)wait_ns / (double)(alive_ns - idle_ns);
    *out = v > 1 ? 1 : v;
    return true;
}

void csp_uncount_thread(int procs_fd, int uncounted_fd, int pid, int tid, uint64_t since)
{
    uint32_t key = (uint32_t)pid, t = (uint32_t)tid;
    uint8_t one = 1;
    struct pt_proc pr;
    /* Marked first, so its exit is not counted once more. */
    if (bpf_map_update_elem(uncounted_fd, &t, &one, BPF_ANY) || bpf_map_lookup_elem(procs_fd, &key, &pr))
        return;
    pr.threads -= 1;
    pr.births_ns -= since;
    bpf_map_update_elem(procs_fd, &key, &pr, BPF_EXIST);
}

void csp_free(struct csp *c)
{
    free(c->p);
    memset(c, 0, sizeof(*c));
}
