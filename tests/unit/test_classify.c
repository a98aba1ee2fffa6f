/* Roles of Java blocker classes, from the class and its superclasses. */
#include <string.h>

#include "check.h"
#include "classify.h"

static int role(const char *cls, const char *supers)
{
    struct pt_class c;
    classify_java(cls, supers, &c);
    return c.wait;
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
    return CHECK_DONE();
}
