import java.util.concurrent.locks.ReentrantLock;

/** CSP with threads born and dying while watched: a new thread every
 *  10 ms, each taking one ReentrantLock 12 times for 0.5 ms of spinning,
 *  with 0.5 ms of spinning outside it, and never sleeping: each lives some
 *  15 ms, so one or two live at a time and contend for a lock busy 60% of
 *  the time; main sleeps between starts (idle). After DELAY_MS, so
 *  that a tracer that recognises JVMs after a while sees every park.
 *  Prints what the threads timed, summed: wait_ns in lock() and alive_ns
 *  (their lifetimes, all of it working time), and threads started:
 *  {"threads":N,"wait_ns":NS,"alive_ns":NS}.
 *  usage: java ChurnLock [SECONDS] [DELAY_MS] */
public class ChurnLock {
    static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end)
            Thread.onSpinWait();
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        Thread.sleep(args.length > 1 ? Long.parseLong(args[1]) : 500);
        ReentrantLock lock = new ReentrantLock();
        java.util.concurrent.atomic.AtomicLong waited = new java.util.concurrent.atomic.AtomicLong(),
                alive = new java.util.concurrent.atomic.AtomicLong();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        java.util.List<Thread> all = new java.util.ArrayList<>();
        while (System.nanoTime() < end) {
            Thread t = new Thread(() -> {
                long born = System.nanoTime(), mine = 0;
                for (int i = 0; i < 12; i++) {
                    long asked = System.nanoTime();
                    lock.lock();
                    try {
                        mine += System.nanoTime() - asked;
                        spin(500_000);
                    } finally {
                        lock.unlock();
                    }
                    spin(500_000);
                }
                waited.addAndGet(mine);
                alive.addAndGet(System.nanoTime() - born);
            }, "churn-" + all.size());
            all.add(t);
            t.start();
            Thread.sleep(10);
        }
        for (Thread t : all)
            t.join();
        System.out.println("{\"threads\":" + all.size() + ",\"wait_ns\":" + waited.get() + ",\"alive_ns\":" + alive.get() + "}");
    }
}
