/* idle_stack against stacks as parktrace names them: HotSpot's own threads,
 * pool workers waiting for a task, and real contention that must never be
 * called idle. */
#include "check.h"
#include "idle.h"

#define NFRAMES(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define JAVA(n) { (char *)(n), (char *)PT_JAVA_MODULE }
#define JVM(n) { (char *)(n), (char *)"libjvm.so" }
#define LIBC(n) { (char *)(n), (char *)"libc.so.6" }
#define APP(n) { (char *)(n), (char *)"app" }

/* A G1 worker waiting for GC work: the whole stack, no Java. */
static const struct pt_frame gc_worker[] = {
    LIBC("__futex_abstimed_wait_common"), LIBC("do_futex_wait.constprop.0"), LIBC("__new_sem_wait_slow64.constprop.0"),
    JVM("PosixSemaphore::wait()"), JVM("WorkerThread::run()"), JVM("Thread::call_run()"),
    JVM("thread_native_entry(Thread*)"), LIBC("start_thread"), LIBC("__GI___clone3"),
};
/* A VM-internal wait of a HotSpot thread with no known loop frame. */
static const struct pt_frame vm_thread[] = {
    LIBC("__futex_abstimed_wait_common"), LIBC("__pthread_cond_timedwait64"), JVM("os::PlatformMonitor::wait(long)"),
    JVM("Monitor::wait_without_safepoint_check(long)"), JVM("SomeNewService::loop()"), JVM("Thread::call_run()"),
    JVM("thread_native_entry(Thread*)"), LIBC("start_thread"),
};
/* A Java thread blocked inside the VM (a safepoint): it called into Java. */
static const struct pt_frame java_in_vm[] = {
    LIBC("__futex_abstimed_wait_common"), JVM("os::PlatformMonitor::wait(long)"), JVM("SafepointSynchronize::block(JavaThread*)"),
    JAVA("App.work"), JVM("JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)"),
    JVM("JavaThread::thread_main_inner()"), JVM("Thread::call_run()"), JVM("thread_native_entry(Thread*)"),
};
/* The same stack cut short: no thread start, so nothing can be said. */
static const struct pt_frame vm_cut[] = {
    LIBC("__futex_abstimed_wait_common"), JVM("os::PlatformMonitor::wait(long)"), JVM("SomeNewService::loop()"),
};
/* A pool worker waiting for a task (JDK and Tomcat). */
static const struct pt_frame pool_worker[] = {
    JVM("Unsafe_Park"), JAVA("java.util.concurrent.locks.LockSupport.park"),
    JAVA("java.util.concurrent.LinkedBlockingQueue.take"), JAVA("java.util.concurrent.ThreadPoolExecutor.getTask"),
    JAVA("java.util.concurrent.ThreadPoolExecutor.runWorker"), JAVA("java.lang.Thread.run"),
};
static const struct pt_frame tomcat_worker[] = {
    JAVA("java.util.concurrent.LinkedBlockingQueue.poll"), JAVA("org.apache.tomcat.util.threads.TaskQueue.poll"),
    JAVA("org.apache.tomcat.util.threads.ThreadPoolExecutor.getTask"),
};
/* The same worker once the JIT inlined getTask into runWorker. */
static const struct pt_frame pool_inlined[] = {
    JVM("Unsafe_Park"), JAVA("jdk.internal.misc.Unsafe.park"), JAVA("java.util.concurrent.ForkJoinPool.managedBlock"),
    JAVA("java.util.concurrent.LinkedBlockingQueue.take"), JAVA("java.util.concurrent.ThreadPoolExecutor.runWorker"),
    JAVA("java.lang.Thread.run"),
};
/* A task of the pool waiting on its own queue: not the pool's idleness. */
static const struct pt_frame task_queue_wait[] = {
    JVM("Unsafe_Park"), JAVA("jdk.internal.misc.Unsafe.park"), JAVA("java.util.concurrent.LinkedBlockingQueue.take"),
    JAVA("App.consume"), JAVA("java.util.concurrent.ThreadPoolExecutor.runWorker"), JAVA("java.lang.Thread.run"),
};
/* A Java thread joining another: Thread.join waits on the thread object. */
static const struct pt_frame java_join[] = {
    JVM("JVM_MonitorWait"), JAVA("java.lang.Object.wait"), JAVA("java.lang.Thread.join"),
    JAVA("java.lang.Thread.join"), JAVA("App.main"),
};
/* A pool worker contending for the application's lock inside a task. */
static const struct pt_frame pool_task_lock[] = {
    JVM("Unsafe_Park"), JAVA("java.util.concurrent.locks.ReentrantLock.lock"), JAVA("App.handle"),
    JAVA("java.util.concurrent.ThreadPoolExecutor.runWorker"), JAVA("java.lang.Thread.run"),
};
/* A pipeline stage: a thread whose own run loop takes from its input queue
 * (ZooKeeper's PrepRequestProcessor), whole and cut short; and a request
 * handler waiting on a queue for a reply: the handler's frame is between. */
static const struct pt_frame stage_taking[] = {
    LIBC("pthread_cond_wait"), JVM("Parker::park(bool, long)"), JVM("Unsafe_Park"),
    JAVA("jdk.internal.misc.Unsafe.park"), JAVA("java.util.concurrent.locks.LockSupport.park"),
    JAVA("java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await"),
    JAVA("java.util.concurrent.LinkedBlockingQueue.take"), JAVA("org.apache.zookeeper.server.PrepRequestProcessor.run"),
    JAVA("[StubRoutines (1)]"), JVM("JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)"),
    JVM("thread_entry(JavaThread*, JavaThread*)"), JVM("JavaThread::thread_main_inner()"), LIBC("start_thread"),
};
static const struct pt_frame handler_awaiting_reply[] = {
    JVM("Unsafe_Park"), JAVA("java.util.concurrent.LinkedBlockingQueue.take"), JAVA("App.awaitReply"),
    JAVA("App.handle"), JAVA("App$Connection.run"), JAVA("java.lang.Thread.run"), LIBC("start_thread"),
};
/* Names that merely contain a pattern. */
static const struct pt_frame look_alike[] = {
    APP("MyThreadPoolExecutor.getTaskCount"), APP("app::WorkerThread::runner()"),
};
/* A JIT compiler thread blocked on the compile queue's mutex (ZooKeeper,
 * 2026-11-28): a lock, but the runtime's own. */
static const struct pt_frame compiler_lock[] = {
    LIBC("__lll_lock_wait"), LIBC("___pthread_mutex_lock"), JVM("Mutex::lock_without_safepoint_check()"),
    JVM("CompileBroker::compiler_thread_loop()"), JVM("JavaThread::thread_main_inner()"), JVM("Thread::call_run()"),
    JVM("thread_native_entry(Thread*)"), LIBC("start_thread"),
};

/* A native mutex wait and a native pool's idle worker. */
static const struct pt_frame native_lock[] = {
    LIBC("__lll_lock_wait"), LIBC("pthread_mutex_lock"), APP("tc_acquire_table"), APP("worker"), LIBC("start_thread"),
};
static const struct pt_frame innodb_idle[] = {
    LIBC("__futex_abstimed_wait_common"), LIBC("pthread_cond_timedwait"),
    APP("tpool::thread_pool_generic::wait_for_tasks(std::unique_lock<std::mutex>&, tpool::worker_data*)"),
    APP("tpool::thread_pool_generic::get_task(tpool::worker_data*, tpool::task**)"), LIBC("start_thread"),
};
/* Go 1.19: an M with no goroutine to run, sleeping on its note; and a
 * goroutine's thread waiting for a channel's runtime lock (lock2), which
 * is contention. */
#define GO(n) { (char *)(n), (char *)"go_mutex" }
static const struct pt_frame go_idle_m[] = {
    GO("runtime.futex.abi0"), GO("runtime.futexsleep"), GO("runtime.notesleep"), GO("runtime.mPark"),
    GO("runtime.stopm"), GO("runtime.findrunnable"), GO("runtime.schedule"), GO("runtime.park_m"), GO("runtime.mcall.abi0"),
};
static const struct pt_frame go_sysmon[] = {
    GO("runtime.futex.abi0"), GO("runtime.futexsleep"), GO("runtime.notetsleep_internal"), GO("runtime.notetsleep"),
    GO("runtime.sysmon"), GO("runtime.newm.func1"), GO("runtime.newm1"),
};
/* A goroutine of the runtime's own, parked in a select for good; and a
 * program's goroutine parked in a select of its own. */
static const struct pt_frame go_sigm[] = {
    GO("runtime.gopark"), GO("runtime.selectgo"), GO("runtime.ensureSigM.func1"), GO("runtime.goexit"),
};
static const struct pt_frame go_own_select[] = {
    GO("runtime.gopark"), GO("runtime.selectgo"), GO("main.worker"), GO("runtime.goexit"),
};
static const struct pt_frame go_runtime_lock[] = {
    GO("runtime.futex.abi0"), GO("runtime.futexsleep"), GO("runtime.lock2"), GO("runtime.lockWithRank"),
    GO("runtime.lock"), GO("runtime.chansend"), GO("runtime.chansend1"), GO("main.worker"),
};

int main(void)
{
    CHECK(idle_stack(gc_worker, NFRAMES(gc_worker), true), "a GC worker waiting for work is idle");
    CHECK(idle_stack(gc_worker, 5, false), "a GC worker's stack cut short keeps its loop frame: idle");
    CHECK(idle_stack(vm_thread, NFRAMES(vm_thread), true), "a whole HotSpot thread stack without Java is idle");
    CHECK(!idle_stack(java_in_vm, NFRAMES(java_in_vm), true), "a Java thread blocked in the VM is not idle");
    CHECK(!idle_stack(vm_cut, NFRAMES(vm_cut), false), "a cut stack without a loop frame is not called idle");
    CHECK(idle_stack(pool_worker, NFRAMES(pool_worker), true), "a JDK pool worker waiting for a task is idle");
    CHECK(idle_stack(tomcat_worker, NFRAMES(tomcat_worker), false), "Tomcat's pool worker waiting for a task is idle");
    CHECK(!idle_stack(pool_task_lock, NFRAMES(pool_task_lock), true), "a pool worker waiting for a lock is contention");
    CHECK(idle_stack(pool_inlined, NFRAMES(pool_inlined), true), "a worker taking a task with getTask inlined is idle");
    CHECK(!idle_stack(task_queue_wait, NFRAMES(task_queue_wait), true), "a task waiting on its own queue is not idle");
    CHECK(idle_stack(stage_taking, NFRAMES(stage_taking), true), "a thread's run loop taking from its queue is idle");
    CHECK(!idle_stack(stage_taking, 8, false), "the same stage cut short above run() is not called idle");
    CHECK(!idle_stack(handler_awaiting_reply, NFRAMES(handler_awaiting_reply), true),
          "a handler waiting on a queue for a reply is not idle");
    CHECK(!idle_stack(look_alike, NFRAMES(look_alike), false), "names that only contain a pattern are not idle");
    CHECK(!idle_stack(native_lock, NFRAMES(native_lock), true), "a native mutex wait is contention");
    CHECK(idle_stack(innodb_idle, NFRAMES(innodb_idle), true), "an InnoDB pool worker waiting for tasks is idle");
    CHECK(idle_stack(java_join, NFRAMES(java_join), false), "a Java thread in Thread.join waits with the idle");
    CHECK(!idle_stack(NULL, 0, false), "no stack is not idle");
    /* Which locks are the runtime's own. */
    CHECK(idle_stack(compiler_lock, NFRAMES(compiler_lock), true) & PT_IDLE_RUNTIME,
          "a compiler thread's lock on the compile queue is the runtime's housekeeping");
    CHECK(idle_stack(compiler_lock, 4, false) & PT_IDLE_RUNTIME, "so is the same stack cut short below its loop");
    CHECK(idle_stack(vm_thread, NFRAMES(vm_thread), true) & PT_IDLE_RUNTIME, "a whole HotSpot thread's stack is the runtime's");
    CHECK(!(idle_stack(java_in_vm, NFRAMES(java_in_vm), true) & PT_IDLE_RUNTIME), "a Java thread's lock in the VM is not");
    CHECK(!(idle_stack(pool_worker, NFRAMES(pool_worker), true) & PT_IDLE_RUNTIME),
          "a pool worker's queue lock is contention among workers");
    CHECK(!(idle_stack(innodb_idle, NFRAMES(innodb_idle), true) & PT_IDLE_RUNTIME), "a native pool's locks are the program's");
    CHECK(!(idle_stack(java_join, NFRAMES(java_join), false) & PT_IDLE_RUNTIME), "a join is not the runtime's lock");
    CHECK(idle_stack(go_idle_m, NFRAMES(go_idle_m), false) & PT_IDLE_RUNTIME, "a Go M with nothing to run is the runtime's");
    CHECK(idle_stack(go_sysmon, NFRAMES(go_sysmon), false) & PT_IDLE_RUNTIME, "Go's sysmon sleeping is the runtime's");
    CHECK(!idle_stack(go_runtime_lock, NFRAMES(go_runtime_lock), false), "a Go channel's runtime lock is contention");
    CHECK(idle_stack(go_sigm, NFRAMES(go_sigm), true) & PT_IDLE_RUNTIME,
          "a goroutine of the runtime's own, parked, is the runtime's");
    CHECK(!idle_stack(go_own_select, NFRAMES(go_own_select), true), "a program's goroutine in a select is not idle");
    CHECK(!idle_stack(go_sigm, 2, false), "a goroutine's stack cut short before its start says nothing");
    return CHECK_DONE();
}
