/* Roles of Java blocker classes, from the class and its superclasses. */
#include <string.h>

#include "check.h"
#include "classify.h"
#include "../../bpf/parktrace.h"

static int role(const char *cls, const char *supers)
{
    struct pt_class c;
    classify_java(cls, supers, &c);
    return c.wait;
}

/* A goroutine park on a semaphore with frames NAMES (innermost first). */
static bool go_class(const char **names, int n, const char *cls, bool wait, uint32_t field)
{
    struct pt_frame f[8] = {0};
    for (int i = 0; i < n && i < 8; i++)
        f[i].name = (char *)names[i];
    struct pt_stack st = {.n = n, .frames = f};
    struct pt_class c;
    classify_go(&st, PT_GO_SEMA, &c);
    return strcmp(c.cls, cls) == 0 && c.wait == wait && c.field == field;
}

int main(void)
{
    const char *aqs = "java.util.concurrent.locks.AbstractQueuedSynchronizer;"
                      "java.util.concurrent.locks.AbstractOwnableSynchronizer";
    CHECK(!role("java.util.concurrent.locks.ReentrantLock$NonfairSync",
                "java.util.concurrent.locks.ReentrantLock$Sync;java.util.concurrent.locks.AbstractQueuedSynchronizer"),
          "ReentrantLock's sync is a lock");
    CHECK(role("java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject", ""),
          "a condition is a wait");
    CHECK(role("java.util.concurrent.CountDownLatch$Sync", aqs), "a latch is a wait, though an AQS");
    CHECK(!role("java.util.concurrent.ThreadPoolExecutor$Worker", aqs),
          "an AQS the JDK uses as a lock is a lock, from its superclass");
    CHECK(!role("app.Gate", "app.BaseLock;java.util.concurrent.locks.ReentrantLock"),
          "a program's class takes the nearest known superclass's role");
    CHECK(role("app.Mailbox", "java.util.concurrent.SynchronousQueue"), "a handoff subclass is a wait");
    CHECK(role("<no blocker>", ""), "a park without a blocker is a wait");
    CHECK(role("app.Event", NULL), "an unknown class without Lock or Sync in its name is a wait");
    CHECK(go_class((const char *[]){"runtime.gopark", "runtime.semacquire1", "sync.runtime_SemacquireMutex",
                                    "sync.(*Mutex).lockSlow", "main.worker"}, 5, "sync.Mutex", false, 4),
          "a goroutine in Mutex.lockSlow waits on the Mutex, its semaphore 4 bytes in");
    CHECK(go_class((const char *[]){"runtime.gopark", "runtime.semacquire1", "sync.runtime_SemacquireMutex",
                                    "sync.(*Mutex).lockSlow", "sync.(*RWMutex).Lock", "main.w"}, 6, "sync.RWMutex",
                   false, 4), "RWMutex.Lock taking its writers' Mutex is the RWMutex's wait");
    CHECK(go_class((const char *[]){"runtime.gopark", "sync.runtime_SemacquireMutex", "sync.(*RWMutex).RLock"}, 3,
                   "sync.RWMutex", false, 12), "RLock waits on readerSem, 12 bytes in");
    CHECK(go_class((const char *[]){"runtime.gopark", "runtime.semacquire1", "sync.runtime_SemacquireMutex",
                                    "main.worker"}, 4, "sync.RWMutex", false, 12),
          "RLock inlined into its caller (no frame of its own) still waits on readerSem");
    CHECK(go_class((const char *[]){"runtime.gopark", "sync.runtime_SemacquireMutex"}, 2, "semaphore", false, 0),
          "a stack cut short at the semaphore call says nothing of its caller");
    CHECK(go_class((const char *[]){"runtime.gopark", "sync.runtime_Semacquire", "sync.(*WaitGroup).Wait"}, 3,
                   "sync.WaitGroup", true, 8), "WaitGroup.Wait is a wait");
    CHECK(go_class((const char *[]){"runtime.gopark", "internal/poll.runtime_Semacquire"}, 2, "semaphore", false, 0),
          "another semaphore is a lock at its own address");
    struct pt_class c;
    struct pt_stack none = {0};
    classify_go(&none, PT_GO_RECV, &c);
    CHECK(strcmp(c.cls, "chan receive") == 0 && c.wait, "a receive is a wait on its channel");
    return CHECK_DONE();
}
