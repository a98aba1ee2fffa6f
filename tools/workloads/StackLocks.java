import java.util.concurrent.locks.ReentrantLock;

/** Two call paths into one ReentrantLock, each from its own threads, so a
 *  tracer that merges call paths is caught: reserveStock() and
 *  restockShelf() each time their lock() calls (a woken waiter can lose the
 *  lock to a barging thread and park again, so time, not parks, is what
 *  the two sides can agree on). The hold is a busy loop, so C2 compiles the
 *  paths within the first second. DELAY_MS holds the threads back at first,
 *  so that a tracer that recognises JVMs after a while sees every park.
 *  With "mixed", every thread takes reserveStock() twice and restockShelf()
 *  once in turn, through 0 to 2 more frames, so a thread's stack changes
 *  from one park to the next among six.
 *  usage: java StackLocks [SECONDS] [DELAY_MS] [mixed]
 *  prints {"paths":{"reserveStock":LOCK_NS,"restockShelf":LOCK_NS},"threads":N} */
public class StackLocks {
    static final ReentrantLock lock = new ReentrantLock();
    static volatile long sink;
    static final long[] lockNs = new long[2];

    static void hold(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end)
            sink++;
    }

    /** One lock call of PATH, timed, and a hold; called from the two paths below. */
    static void timedLock(int path) {
        long t0 = System.nanoTime();
        lock.lock();
        long waited = System.nanoTime() - t0;
        try {
            lockNs[path] += waited;     // under the lock
            hold(200_000);
        } finally {
            lock.unlock();
        }
    }

    static void reserveStock() { timedLock(0); }
    static void restockShelf() { timedLock(1); }

    static void reserveLoop(long end) { while (System.nanoTime() < end) reserveStock(); }
    static void restockLoop(long end) { while (System.nanoTime() < end) restockShelf(); }
    /** A path through one or two more frames (run with viaOne and viaTwo
     *  not inlined: -XX:CompileCommand=dontinline,StackLocks::*, which keeps each
     *  path its own frame too: JIT code is named by its outer method). */
    static void viaOne(boolean restock) { if (restock) restockShelf(); else reserveStock(); }
    static void viaTwo(boolean restock) { viaOne(restock); }
    static void mixedLoop(long end) {
        for (int i = 0; System.nanoTime() < end; i++) {
            boolean restock = i % 3 == 2;
            int depth = i / 3 % 3;
            if (depth == 0)
                viaOne(restock);
            else if (depth == 1)
                viaTwo(restock);
            else if (restock)
                restockShelf();
            else
                reserveStock();
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        if (args.length > 1)
            Thread.sleep(Long.parseLong(args[1]));
        long end = System.nanoTime() + (long) (seconds * 1e9);
        boolean mixed = args.length > 2 && args[2].equals("mixed");
        Thread[] ts = mixed ? new Thread[] {
            new Thread(() -> mixedLoop(end), "mixed-1"), new Thread(() -> mixedLoop(end), "mixed-2"),
            new Thread(() -> mixedLoop(end), "mixed-3"), new Thread(() -> mixedLoop(end), "mixed-4"),
        } : new Thread[] {
            new Thread(() -> reserveLoop(end), "reserver-1"), new Thread(() -> reserveLoop(end), "reserver-2"),
            new Thread(() -> restockLoop(end), "restocker-1"), new Thread(() -> restockLoop(end), "restocker-2"),
        };
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        System.out.printf("{\"paths\":{\"reserveStock\":%d,\"restockShelf\":%d},\"threads\":%d}%n",
                          lockNs[0], lockNs[1], ts.length);
    }
}
