import java.util.concurrent.locks.ReentrantLock;

/** The thesis's "large critical section" pattern (Listing 5.1): three
 *  ReentrantLocks whose critical sections sleep 4, 16 and 64 ms. Here each
 *  lock has its own group of threads, so every lock is always contended and
 *  the hold estimate applies to all three; a 1 ms pause outside the lock
 *  keeps a woken waiter from being overtaken.
 *  usage: java LargeCriticalSection [SECONDS] [THREADS_PER_LOCK] */
public class LargeCriticalSection {
    static final long[] HOLD_MS = {4, 16, 64};

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int perLock = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread[] all = new Thread[HOLD_MS.length * perLock];
        for (int l = 0; l < HOLD_MS.length; l++) {
            ReentrantLock lock = new ReentrantLock();
            long hold = HOLD_MS[l];
            for (int t = 0; t < perLock; t++) {
                Thread th = new Thread(() -> {
                    try {
                        while (System.nanoTime() < end) {
                            lock.lock();
                            try {
                                Thread.sleep(hold);
                            } finally {
                                lock.unlock();
                            }
                            Thread.sleep(1);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "lock" + hold + "ms-" + t);
                all[l * perLock + t] = th;
                th.start();
            }
        }
        for (Thread th : all)
            th.join();
    }
}
