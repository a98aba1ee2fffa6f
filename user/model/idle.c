#include "idle.h"

#include <string.h>

/* Frames that wait for work, matched as a whole name or as its last
 * dotted or scoped part ("ThreadPoolExecutor.getTask" matches the JDK's
 * and Tomcat's copies). Kept to loops whose only job is to wait for a task
 * or a timer; a frame that can also wait for a lock does not belong here. */
static const char *const wait_for_work[] = {
    /* Java pools */
    "ThreadPoolExecutor.getTask",                 /* java.util.concurrent, Tomcat */
    "ForkJoinPool.awaitWork",
    "QueuedThreadPool$Runner.idleJobPoll",        /* Jetty */
    "SingleThreadEventExecutor.takeTask",         /* Netty */
    "TimerThread.mainLoop",                       /* java.util.Timer */
    /* The JDK's own service threads */
    "Reference.waitForReferencePendingList",      /* Reference Handler */
    "JVM_WaitForReferencePendingList",            /* its native half */
    "Finalizer$FinalizerThread.run",
    "CleanerImpl.run",                            /* Common-Cleaner */
    "PlatformRecorder.takeNap",                   /* JFR's periodic tasks */
    "CallJavaMainInNewThread",                    /* the java launcher joining main */
    "__pthread_clockjoin_ex",                     /* pthread_join: waiting for a thread to end */
    "pthread_join",
    "java.lang.Thread.join",                      /* waiting for a Java thread to end */
    "JavaThread::sleep",                          /* Thread.sleep: waiting for time, not a thread */
    /* Native pools */
    "tpool::thread_pool_generic::wait_for_tasks", /* MariaDB/InnoDB */
    "g_thread_pool_wait_for_new_task",            /* GLib */
};

/* HotSpot's service loops, whose threads run no Java code (named for stacks
 * cut short before the thread's start). Their waits wait for work; their
 * locks are the runtime's own (a compiler thread taking the compile queue's
 * mutex), not the program's contention. */
static const char *const hotspot_loops[] = {
    "WorkerThread::run",                          /* GC workers */
    "GangWorker::loop",
    "ConcurrentGCThread::run",
    "VMThread::wait_for_operation",
    "VMThread::loop",
    "CompileBroker::compiler_thread_loop",
    "CompileQueue::get",
    "WatcherThread::sleep",
    "ServiceThread::service_thread_entry",
    "MonitorDeflationThread::monitor_deflation_thread_entry",
    "NotificationThread::notification_thread_entry",
    "G1ServiceThread::wait_for_task",
};

/* Go's runtime: an M (an OS thread) with no goroutine to run sleeps on its
 * note until the scheduler hands it one (stopm, mPark); sysmon and the
 * template thread sleep on theirs, and a goroutine waiting for a signal in
 * notetsleepg. Threads with nothing to run: the goroutines' own waits are
 * elsewhere. Not runtime.lock2, the runtime's mutex (a channel's, the
 * scheduler's), which is contention. */
static const char *const go_runtime_idle[] = {
    "runtime.notesleep",
    "runtime.notetsleep",
    "runtime.notetsleepg",
    "runtime.mPark",
    "runtime.stopm",
};

/* NAME is PATTERN, or ends with it after a '.', '$' or ':', with an
 * argument list or nothing after it. */
static bool names(const char *name, const char *pattern)
{
    size_t len = strlen(pattern);
    for (const char *p = strstr(name, pattern); p; p = strstr(p + 1, pattern)) {
        bool starts = p == name || p[-1] == '.' || p[-1] == '$' || p[-1] == ':';
        bool ends = p[len] == '\0' || p[len] == '(';
        if (starts && ends)
            return true;
    }
    return false;
}

static bool names_any(const char *name, const char *const *patterns, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (names(name, patterns[i]))
            return true;
    return false;
}

#define NAMES_ANY(name, list) names_any(name, list, sizeof(list) / sizeof(list[0]))

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The JDK's waiting machinery: parking, locks and conditions, its queues. */
static bool jdk_waiting(const char *name)
{
    return starts_with(name, "java.util.concurrent.") || starts_with(name, "jdk.internal.misc.Unsafe.park") ||
           starts_with(name, "org.apache.tomcat.util.threads.TaskQueue.");
}

/* A pool worker taking its next task, where the JIT inlined getTask into
 * runWorker: from the park outwards, nothing but the JDK's waiting
 * machinery (a queue's take or poll) until ThreadPoolExecutor.runWorker.
 * A task's own queue wait has the task's frames in between. */
static bool pool_worker_taking(const struct pt_frame *frames, int n)
{
    for (int i = 0; i < n; i++) {
        const char *name = frames[i].name;
        bool java = frames[i].module && !strcmp(frames[i].module, PT_JAVA_MODULE);
        if (!name || !java)
            continue;
        if (names(name, "ThreadPoolExecutor.runWorker"))
            return true;
        if (!jdk_waiting(name))
            return false;
    }
    return false;
}

static bool is_java(const struct pt_frame *f)
{
    return f->name && f->module && !strcmp(f->module, PT_JAVA_MODULE);
}

/* A JDK queue's take or poll: a consumer waiting for an item. */
static bool queue_take(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (!strcmp(dot, ".take") || !strcmp(dot, ".poll") || !strcmp(dot, ".takeFirst") ||
                   !strcmp(dot, ".pollFirst")) &&
           (strstr(name, "Queue.") || strstr(name, "Deque."));
}

/* A thread whose own run() loop waits on a queue for its next item (a
 * pipeline stage: ZooKeeper's request processors, a log writer): from the
 * park outwards the JDK's waiting machinery with a queue's take or poll,
 * then a run method, then nothing but Thread.run. The thread has nothing
 * else to do: it waits for work. WHOLE: the walk reached the thread's start,
 * so nothing is hidden above the run method. */
static bool thread_loop_taking(const struct pt_frame *frames, int n, bool whole)
{
    bool taking = false;
    int i = 0;
    for (; i < n && (!is_java(&frames[i]) || jdk_waiting(frames[i].name)); i++)
        taking |= is_java(&frames[i]) && queue_take(frames[i].name);
    if (!whole || !taking || i == n || !names(frames[i].name, "run"))
        return false;
    /* Above it only the thread's start: Thread.run, the call stub. */
    for (i++; i < n; i++)
        if (is_java(&frames[i]) && frames[i].name[0] != '[' && !names(frames[i].name, "java.lang.Thread.run") &&
            !names(frames[i].name, "java.lang.Thread.runWith"))
            return false;
    return true;
}

/* A goroutine of the Go runtime's own, parked (runtime.gopark) with no
 * frame of the program's between its park and its start (runtime.goexit):
 * the signal mask's keeper (ensureSigM), the runtime's helpers. */
static bool go_runtime_goroutine(const struct pt_frame *frames, int n)
{
    if (n < 2 || !frames[0].name || strcmp(frames[0].name, "runtime.gopark") != 0)
        return false;
    for (int i = 1; i < n; i++) {
        const char *name = frames[i].name;
        if (!name || name[0] == '[')
            continue;
        if (strncmp(name, "runtime.", 8) != 0)
            return false;
        if (strcmp(name, "runtime.goexit") == 0 || strcmp(name, "runtime.goexit.abi0") == 0)
            return true;
    }
    return false;
}

unsigned idle_stack(const struct pt_frame *frames, int n, bool whole)
{
    if (pool_worker_taking(frames, n) || thread_loop_taking(frames, n, whole))
        return PT_IDLE_WAIT;
    if (go_runtime_goroutine(frames, n))
        return PT_IDLE_WAIT | PT_IDLE_RUNTIME;
    bool hotspot_thread = false, java = false, work = false;
    for (int i = 0; i < n; i++) {
        const char *name = frames[i].name;
        if (!name)
            continue;
        if (NAMES_ANY(name, hotspot_loops) || NAMES_ANY(name, go_runtime_idle))
            return PT_IDLE_WAIT | PT_IDLE_RUNTIME;
        work |= NAMES_ANY(name, wait_for_work);
        hotspot_thread |= names(name, "thread_native_entry");
        java |= names(name, "JavaCalls::call_helper") || (frames[i].module && !strcmp(frames[i].module, PT_JAVA_MODULE));
    }
    if (whole && hotspot_thread && !java)
        return PT_IDLE_WAIT | PT_IDLE_RUNTIME;
    return work ? PT_IDLE_WAIT : 0;
}
