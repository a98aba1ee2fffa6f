#include "classify.h"

#include <string.h>

#include "str_hash.h"
#include "../bpf/parktrace.h"

static const struct rule {
    const char *prefix;
    const char *cls;
    bool wait;
} rules[] = {
    /* Mutexes, including the re-lock inside pthread_cond_wait. */
    {"__lll_lock_wait_private", "futex", false},
    {"__lll_lock_wait", "pthread_mutex", false},
    {"__pthread_mutex_cond_lock", "pthread_mutex", false},
    {"__pthread_mutex_lock", "pthread_mutex", false},
    {"___pthread_mutex_lock", "pthread_mutex", false},
    {"pthread_mutex_lock", "pthread_mutex", false},
    {"pthread_mutex_timedlock", "pthread_mutex", false},
    {"pthread_mutex_clocklock", "pthread_mutex", false},
    {"__pthread_mutex_clocklock", "pthread_mutex", false},
    {"__pthread_mutex_timedlock", "pthread_mutex", false},
    {"__pthread_rwlock_", "pthread_rwlock", false},
    {"pthread_rwlock_", "pthread_rwlock", false},
    {"__pthread_cond_wait", "pthread_cond", true},
    {"___pthread_cond_", "pthread_cond", true},
    {"__pthread_cond_", "pthread_cond", true},
    {"pthread_cond_", "pthread_cond", true},
    {"__new_sem_wait", "sem", false},
    {"sem_wait", "sem", false},
    {"sem_timedwait", "sem", false},
    {"sem_clockwait", "sem", false},
    {"__sem_wait", "sem", false},
    {"pthread_join", "futex", true},
    {"__pthread_clockjoin", "futex", true},
    {"pthread_barrier_wait", "futex", true},
    {"___pthread_barrier_wait", "futex", true},
};

/* Callers whose waits are a runtime's idle time, whatever primitive they
 * use: HotSpot's GC workers and signal thread wait for work on semaphores. */
static const char *const idle_callers[] = {"PosixSemaphore::wait"};

static bool called_from_idle(const struct pt_stack *st)
{
    for (int i = 0; i < st->n; i++)
        for (size_t r = 0; r < sizeof(idle_callers) / sizeof(idle_callers[0]); r++)
            if (strncmp(st->frames[i].name, idle_callers[r], strlen(idle_callers[r])) == 0)
                return true;
    return false;
}

/* A runtime's own lock, waited on through a condition variable and a
 * mutex of its own: named for the runtime wherever it is in the stack
 * (metrics.md, "Idle, joins and runtime locks"). CPython's GIL: take_gil
 * (take_gil.lto_priv.0 in Debian's build, named from python3.X-dbg's
 * debug file) waits on the GIL's condition in slices of its switch
 * interval, so most of its waits time out: as a condition it read as a
 * timer loop, idle, where it is the contention of every CPU-bound thread. */
static const struct rule runtime_locks[] = {
    {"take_gil", "python-gil", false},
    {"drop_gil", "python-gil", false},   /* the holder waiting for a forced switch to happen */
};

static bool runtime_lock(const struct pt_stack *st, struct pt_class *out)
{
    for (int i = 0; i < st->n; i++)
        for (size_t r = 0; r < sizeof(runtime_locks) / sizeof(runtime_locks[0]); r++)
            if (st->frames[i].name &&
                strncmp(st->frames[i].name, runtime_locks[r].prefix, strlen(runtime_locks[r].prefix)) == 0) {
                out->cls = runtime_locks[r].cls;
                out->wait = runtime_locks[r].wait;
                return true;
            }
    return false;
}

void classify_futex(const struct pt_stack *st, struct pt_class *out)
{
    if (called_from_idle(st)) {
        out->cls = "sem";
        out->wait = true;
        return;
    }
    if (runtime_lock(st, out))
        return;
    for (int i = 0; i < st->n; i++) {
        const char *name = st->frames[i].name;
        for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
            if (strncmp(name, rules[r].prefix, strlen(rules[r].prefix)) == 0) {
                out->cls = rules[r].cls;
                out->wait = rules[r].wait;
                return;
            }
        }
    }
    /* A bare futex: nothing says it guards a critical section. */
    out->cls = "futex";
    out->wait = true;
}

/* Functions that release a thread's joiners as the thread ends. */
static const char *const thread_end_releasers[] = {
    "release_sentinel",   /* CPython 3.x: the thread state's lock, at its deletion */
};

bool classify_join_waker(const struct pt_stack *waker)
{
    for (int i = 0; waker && i < waker->n; i++)
        for (size_t r = 0; r < sizeof(thread_end_releasers) / sizeof(thread_end_releasers[0]); r++)
            if (strncmp(waker->frames[i].name, thread_end_releasers[r], strlen(thread_end_releasers[r])) == 0)
                return true;
    return false;
}

/* Synchronizers whose parks wait for an event or for work; the AQS locks,
 * semaphores and StampedLock are locks. Classes named here by their simple
 * names, nested classes included ("CountDownLatch$Sync"). */
static const char *const java_waits[] = {
    "ConditionObject", "CountDownLatch", "SynchronousQueue", "LinkedTransferQueue", "Exchanger",
    "Phaser", "ForkJoinPool", "FutureTask", "CompletableFuture", "<no blocker>",
};
static const char *const java_locks[] = {
    "ReentrantLock", "ReentrantReadWriteLock", "Semaphore", "StampedLock",
    /* Any other AQS is a lock unless its own name says otherwise. */
    "AbstractQueuedSynchronizer", "AbstractQueuedLongSynchronizer",
};

static bool names(const char *cls, size_t len, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memmem(cls, len, list[i], strlen(list[i])))
            return true;
    return false;
}

/* 1 for a wait, 0 for a lock, -1 when NAME (LEN bytes) says neither. */
static int known_role(const char *name, size_t len)
{
    if (names(name, len, java_waits, sizeof(java_waits) / sizeof(*java_waits)))
        return 1;
    if (names(name, len, java_locks, sizeof(java_locks) / sizeof(*java_locks)))
        return 0;
    return -1;
}

/* The roles of the classes met last, by name and superclasses: a JVM
 * making a new lock object at each wait (H2's transactions, 7 000 a
 * second) classified the same class with 32 substring searches each time.
 * Names too long for an entry are not kept. */
#define ROLE_MEMO 8
static struct role_memo {
    char cls[128], supers[256];
    bool used, wait;
} memo[ROLE_MEMO];

static struct role_memo *memo_of(const char *cls)
{
    return &memo[str_hash(cls) % ROLE_MEMO];
}

static bool classify_java_uncached(const char *cls, const char *supers);

void classify_java(const char *cls, const char *supers, struct pt_class *out)
{
    out->cls = cls;
    const char *sup = supers ? supers : "";
    struct role_memo *m = memo_of(cls);
    if (m->used && strcmp(m->cls, cls) == 0 && strcmp(m->supers, sup) == 0) {
        out->wait = m->wait;
        return;
    }
    out->wait = classify_java_uncached(cls, supers);
    if (strlen(cls) < sizeof(m->cls) && strlen(sup) < sizeof(m->supers)) {
        strcpy(m->cls, cls);
        strcpy(m->supers, sup);
        m->wait = out->wait;
        m->used = true;
    }
}

/* Whether class CLS, of superclasses SUPERS (';'-separated), is a wait. */
static bool classify_java_uncached(const char *cls, const char *supers)
{
    int role = known_role(cls, strlen(cls));
    /* A class of the program's own takes the role of the nearest known
     * superclass: class MyLock extends ReentrantLock is a lock. */
    for (const char *s = supers; role < 0 && s && *s;) {
        const char *end = strchr(s, ';');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        role = known_role(s, len);
        s = end ? end + 1 : s + len;
    }
    if (role < 0)
        role = !strstr(cls, "Lock") && !strstr(cls, "Sync");
    return role == 1;
}

void classify_override(const struct pt_options *o, const char *cls, bool *wait)
{
    const char *simple = strrchr(cls, '.');
    simple = simple ? simple + 1 : cls;
    for (int i = 0; i < o->nroles; i++)
        if (strcmp(o->roles[i].cls, cls) == 0 || strcmp(o->roles[i].cls, simple) == 0)
            *wait = o->roles[i].wait;
}

/* The sync types that park on a runtime semaphore, by the innermost frame
 * of package sync, and where that semaphore lies in them (Go 1.19's
 * sync: Mutex.sema at 4; RWMutex.writerSem 8, readerSem 12, its w.sema 4;
 * WaitGroup's at 8 since 1.18). */
enum { GO_MUTEX, GO_RWMUTEX_RLOCK, GO_RWMUTEX_LOCK, GO_WAITGROUP, GO_SEMA_RULES };
static const struct go_sema_rule {
    const char *frame;
    const char *cls;
    bool wait;
    uint32_t field;
} go_sema_rules[GO_SEMA_RULES] = {
    [GO_MUTEX] = {"sync.(*Mutex).lockSlow", "sync.Mutex", false, 4},
    [GO_RWMUTEX_RLOCK] = {"sync.(*RWMutex).RLock", "sync.RWMutex", false, 12},
    [GO_RWMUTEX_LOCK] = {"sync.(*RWMutex).Lock", "sync.RWMutex", false, 8},
    [GO_WAITGROUP] = {"sync.(*WaitGroup).Wait", "sync.WaitGroup", true, 8},
};

/* Whether frame I of ST is sync's own semaphore call made straight from
 * a frame outside sync: the sync function that made it was inlined there,
 * and a frame-pointer walk sees no frame of its own. In Go 1.19's sync
 * only RWMutex.RLock, of the three callers of runtime_SemacquireMutex, is
 * small enough to be inlined (Go's block profile, which expands inlined
 * calls, names it). */
static bool inlined_rlock_at(const struct pt_stack *st, int i)
{
    const char *name = st->frames[i].name, *up = i + 1 < st->n ? st->frames[i + 1].name : NULL;
    return name && up && strcmp(name, "sync.runtime_SemacquireMutex") == 0 && strncmp(up, "sync.", 5) != 0;
}

/* The rule of the innermost sync frame of ST from frame *AT on (*AT moves
 * past it), or -1. */
static int go_sema_rule_at(const struct pt_stack *st, int *at)
{
    for (int i = *at; i < st->n; i++) {
        const char *name = st->frames[i].name;
        if (inlined_rlock_at(st, i)) {
            *at = i + 1;
            return GO_RWMUTEX_RLOCK;
        }
        for (int r = 0; name && r < GO_SEMA_RULES; r++)
            if (strcmp(name, go_sema_rules[r].frame) == 0) {
                *at = i + 1;
                return r;
            }
    }
    return -1;
}

void classify_go(const struct pt_stack *st, uint32_t what, struct pt_class *out)
{
    static const char *const waits[PT_GO_WAIT_COUNT] = {
        [PT_GO_COND] = "sync.Cond", [PT_GO_RECV] = "chan receive", [PT_GO_SEND] = "chan send",
        [PT_GO_SELECT] = "select",
    };
    out->field = 0;
    if (what != PT_GO_SEMA) {
        out->cls = what < PT_GO_WAIT_COUNT && waits[what] ? waits[what] : "go-park";
        out->wait = true;
        return;
    }
    /* Any other user of the runtime's semaphores (internal/poll's fdMutex):
     * a lock of the runtime's own. */
    out->cls = "semaphore";
    out->wait = false;
    int at = 0, r = go_sema_rule_at(st, &at);
    if (r < 0)
        return;
    out->cls = go_sema_rules[r].cls;
    out->wait = go_sema_rules[r].wait;
    out->field = go_sema_rules[r].field;
    /* RWMutex.Lock takes its writers' Mutex (w, at 0) first: a wait there
     * is the RWMutex's, its semaphore the Mutex's own. */
    int up = at;
    if (r == GO_MUTEX && go_sema_rule_at(st, &up) == GO_RWMUTEX_LOCK)
        out->cls = go_sema_rules[GO_RWMUTEX_LOCK].cls;
}
