#include "csp.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../bpf/parktrace.h"
#include "procstatus.h"

void csp_init(struct csp *c, const struct proc_lives *lives, uint64_t run_start)
{
    memset(c, 0, sizeof(*c));
    c->lives = *lives;
    c->run_start = run_start;
    c->p = calloc(CSP_MAX_PROCS, sizeof(*c->p));
}

static unsigned bucket(int pid)
{
    return (unsigned)pid * 2654435761u % CSP_BUCKETS;
}

static struct csp_proc *find(const struct csp *c, int pid)
{
    for (int i = c->head[bucket(pid)]; i; i = c->p[i - 1].next)
        if (c->p[i - 1].pid == pid)
            return &c->p[i - 1];
    return NULL;
}

static void unlink_proc(struct csp *c, struct csp_proc *p)
{
    int idx = (int)(p - c->p) + 1;
    for (int *at = &c->head[bucket(p->pid)]; *at; at = &c->p[*at - 1].next)
        if (*at == idx) {
            *at = p->next;
            return;
        }
}

/* The entry for new process PID: EXITED, the entry of an exited process
 * that had its pid (or NULL), else a free one, else the exited process seen
 * exiting longest ago (counted), else none (counted). */
static struct csp_proc *entry_for(struct csp *c, int pid, struct csp_proc *exited)
{
    struct csp_proc *p = exited;
    if (p) {
        unlink_proc(c, p);
    } else if (c->n < CSP_MAX_PROCS) {
        p = &c->p[c->n++];
    } else {
        for (int i = 0; i < c->n; i++)
            if (c->p[i].exited && (!p || c->p[i].exited_ns < p->exited_ns))
                p = &c->p[i];
        if (!p) {
            c->refused++;
            return NULL;
        }
        unlink_proc(c, p);
        c->evicted++;
    }
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->next = c->head[bucket(pid)];
    c->head[bucket(pid)] = (int)(p - c->p) + 1;
    return p;
}

/* How to turn a start time in clock ticks since boot (stat's field 22,
 * on the boot-time clock) into CLOCK_MONOTONIC ns: ticks * TICK_NS - ASLEEP. */
struct tick_clock {
    uint64_t tick_ns, asleep_ns;
};

static struct tick_clock tick_clock_now(void)
{
    struct timespec mono, boot;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    int64_t asleep = ((int64_t)boot.tv_sec - mono.tv_sec) * 1000000000LL + (boot.tv_nsec - mono.tv_nsec);
    long hz = sysconf(_SC_CLK_TCK);
    return (struct tick_clock){.tick_ns = 1000000000ULL / (uint64_t)(hz > 0 ? hz : 100),
                               .asleep_ns = asleep > 0 ? (uint64_t)asleep : 0};
}

/* PID's threads now, and the thread time they were alive in the run before
 * NOW: each from its own start or the run's, whichever is later (a process
 * started mid-run was counted as if its threads had lived since the run's
 * start: a CSP of 0.21 for 0.56). At most CSP_MAX_THREADS are looked at one
 * by one; the rest count from the run's start. */
#define CSP_MAX_THREADS 4096
static int64_t count_threads(int pid, uint64_t run_start, uint64_t now, uint64_t *alive_ns)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *d = opendir(path);
    int64_t n = 0;
    *alive_ns = 0;
    const struct tick_clock tc = tick_clock_now();
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        uint64_t ticks, from = run_start;
        int rc = n < CSP_MAX_THREADS ? procstatus_thread_start_time(pid, atoi(e->d_name), &ticks) : -1;
        /* A killed process's leader stays listed until it is reaped: counted
         * alive, it hid its threads' lives, which the kernel kept for a
         * process with none left (watch_exited), and its waits read longer
         * than its threads lived. */
        if (rc == 1)
            continue;
        if (rc == 0) {
            uint64_t ns = ticks * tc.tick_ns, born = ns > tc.asleep_ns ? ns - tc.asleep_ns : 0;
            from = born > from ? born : from;
        }
        *alive_ns += now > from ? now - from : 0;
        n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* PID ended before it was watched (its blockers named after its end,
 * the loop held up): what the kernel kept of its threads that waited is
 * its alive time, none of it known idle. Nothing kept: no entry; false. */
static bool take_exited(struct csp *c, int pid, struct csp_proc *seen, uint64_t now)
{
    uint64_t lived;
    if (!proc_lives_take_exited(&c->lives, pid, &lived))
        return false;
    struct csp_proc *p = entry_for(c, pid, seen);
    if (!p)
        return true;
    p->final_alive = lived;
    p->exited = true;
    p->exited_ns = now;
    return true;
}

/* The same, for a process listed with no thread alive: one still exiting
 * (PF_EXITING, before the kernel's exit tracepoint) adds its life, and the
 * dead ones', as it passes it. Until then it is looked at again. */
static void watch_exited(struct csp *c, int pid, struct csp_proc *seen, uint64_t now)
{
    if (take_exited(c, pid, seen, now) || procstatus_gone(pid) || c->nlate >= CSP_LATE)
        return;
    c->late[c->nlate].pid = pid;
    c->late[c->nlate++].tries = 0;
}

/* The processes watch_exited left for later: done once watched again,
 * once their lives are kept, once reaped (read before the last look: by
 * then every exit has passed the tracepoint), or after CSP_LATE_TRIES. */
static void retry_late(struct csp *c, uint64_t now)
{
    for (int i = 0; i < c->nlate;) {
        int pid = c->late[i].pid;
        struct csp_proc *seen = find(c, pid);
        bool gone = procstatus_gone(pid);
        bool done = (seen && !seen->exited) || take_exited(c, pid, seen, now) || gone ||
                    ++c->late[i].tries >= CSP_LATE_TRIES;
        if (!done) {
            i++;
            continue;
        }
        c->late[i] = c->late[--c->nlate];
    }
}

void csp_watch(struct csp *c, int pid, uint64_t now)
{
    struct csp_proc *seen = c->p ? find(c, pid) : NULL;
    if (!c->p || (seen && !seen->exited))
        return;     /* watched already */
    /* Entered before the threads are counted, so a thread born in between
     * is counted by the kernel rather than lost. */
    if (!proc_lives_enter(&c->lives, pid))
        return;
    uint64_t before_ns;
    int64_t listed = count_threads(pid, c->run_start, now, &before_ns), n = listed;
    if (n <= 0) {
        proc_lives_forget(&c->lives, pid);
        watch_exited(c, pid, seen, now);
        return;
    }
    struct pt_proc cur;
    if (!proc_lives_read(&c->lives, pid, &cur))
        return;
    /* The kernel has counted births and deaths since the entry was made:
     * the threads that existed before are the count minus that balance. */
    n -= cur.threads;
    cur.threads += n;
    cur.births_ns += (uint64_t)n * now;
    proc_lives_write(&c->lives, pid, &cur);
    struct csp_proc *p = entry_for(c, pid, seen);
    if (!p) {
        proc_lives_forget(&c->lives, pid);
        return;
    }
    /* The threads the kernel saw born meanwhile are its to count: born
     * after NOW, they added nothing to the listed threads' alive time, and
     * scaling it down by their share took a tenth of a starting JVM's
     * threads' time away (its waits then longer than its threads lived).
     * Threads that died meanwhile were not listed: their share is the
     * listed threads' average. */
    p->before_ns = n <= 0 ? 0 : n > listed ? (uint64_t)((double)before_ns * (double)n / (double)listed) : before_ns;
    /* Threads that waited and died before now were not listed; the kernel
     * kept their lives (the entry is made, so later deaths count there). */
    uint64_t died_ns;
    if (proc_lives_take_unwatched(&c->lives, pid, &died_ns))
        p->before_ns += died_ns;
    p->window_alive = p->window_sleep = 0;
    /* Its threads read procs again at their next sleep. */
    proc_lives_changed(&c->lives);
}

/* N * NOW + PLUS - MINUS, never below 0: a thread time kept as sums of
 * start and end times by the kernel. */
static uint64_t open_sum(int64_t n, uint64_t now, uint64_t plus, uint64_t minus)
{
    uint64_t up = (uint64_t)(n > 0 ? n : 0) * now + plus;
    return up > minus ? up - minus : 0;
}

static bool alive_now(const struct csp *c, const struct csp_proc *p, uint64_t now, uint64_t *alive,
                      uint64_t *sleep)
{
    if (p->exited) {
        *alive = p->final_alive;
        *sleep = p->final_sleep;
        return true;
    }
    struct pt_proc pr;
    if (!proc_lives_read(&c->lives, p->pid, &pr))
        return false;
    *alive = p->before_ns + open_sum(pr.threads, now, pr.deaths_ns, pr.births_ns);
    *sleep = open_sum(pr.sleepers, now, pr.slept_ns, pr.sleep_starts_ns);
    return true;
}

/* P's alive time at NOW, read once per NOW (a report asks once per row). */
static bool alive_at(const struct csp *c, struct csp_proc *p, uint64_t now)
{
    if (p->at_ns != now || !now) {
        p->at_ns = now;
        p->at_ok = alive_now(c, p, now, &p->at_alive, &p->at_sleep);
    }
    return p->at_ok;
}

void csp_read_at(struct csp *c, uint64_t now)
{
    retry_late(c, now);
    for (int i = 0; i < c->n; i++)
        alive_at(c, &c->p[i], now);
}

/* PID's alive time at NOW, and its entry; NULL when it is not known. */
static const struct csp_proc *alive_of(struct csp *c, int pid, uint64_t now, uint64_t *alive, uint64_t *sleep)
{
    struct csp_proc *p = find(c, pid);
    if (!p || !alive_at(c, p, now))
        return NULL;
    *alive = p->at_alive;
    *sleep = p->at_sleep;
    return p;
}

bool csp_alive(struct csp *c, int pid, uint64_t now, uint64_t *alive, uint64_t *sleep)
{
    return alive_of(c, pid, now, alive, sleep) != NULL;
}

bool csp_alive_window(struct csp *c, int pid, uint64_t now, uint64_t *alive, uint64_t *sleep)
{
    uint64_t a, s;
    const struct csp_proc *p = alive_of(c, pid, now, &a, &s);
    if (!p)
        return false;
    *alive = a > p->window_alive ? a - p->window_alive : 0;
    *sleep = s > p->window_sleep ? s - p->window_sleep : 0;
    return true;
}

void csp_forget_exited(struct csp *c, uint64_t now)
{
    for (int i = 0; c->p && i < c->n; i++) {
        struct csp_proc *p = &c->p[i];
        /* Gone for good (reaped): every thread's exit was counted. */
        if (p->exited || !procstatus_gone(p->pid))
            continue;
        uint64_t alive, sleep;
        if (!alive_now(c, p, now, &alive, &sleep))
            continue;
        p->final_alive = alive;
        p->final_sleep = sleep;
        p->exited = true;
        p->exited_ns = now;
        proc_lives_forget(&c->lives, p->pid);
    }
}

void csp_roll(struct csp *c, uint64_t now)
{
    for (int i = 0; i < c->n; i++) {
        struct csp_proc *p = &c->p[i];
        if (alive_at(c, p, now)) {
            p->window_alive = p->at_alive;
            p->window_sleep = p->at_sleep;
        }
    }
}

bool csp_value(uint64_t wait_ns, uint64_t alive_ns, uint64_t idle_ns, double *out)
{
    if (alive_ns <= idle_ns)
        return false;
    double v = (double)wait_ns / (double)(alive_ns - idle_ns);
    *out = v > 1 ? 1 : v;
    return true;
}

void csp_free(struct csp *c)
{
    free(c->p);
    memset(c, 0, sizeof(*c));
}
