import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/** The thesis's "large critical section" pattern (Listing 5.1): three
 *  ReentrantLocks whose critical sections sleep 4, 16 and 64 ms. Here each
 *  lock has its own group of threads, so every lock is always contended and
 *  the hold estimate applies to all three; a 1 ms pause outside the lock
 *  keeps a woken waiter from being overtaken. Holds are timed too (a sleep
 *  overshoots its request), and printed as one JSON line at the end:
 *  {"holds":[{"preset_ms":4,"taken":N,"mean_hold_ns":NS,"mean_interval_ns":NS},...]},
 *  the interval being from one acquisition to the next (a hold and the
 *  hand-off to the next holder, over the same stretch as ops), after the
 *  pattern's throughput, `ops_per_sec N`: the three locks' acquisitions per
 *  second, each timed from its first to its last acquisition after a
 *  warm-up (a quarter of the run, at most 500 ms) and before the end.
 *  usage: java LargeCriticalSection [SECONDS] [THREADS_PER_LOCK] */
public class LargeCriticalSection {
    static final long[] HOLD_MS = {4, 16, 64};

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int perLock = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long warm = start + Math.min(500_000_000L, (long) (seconds * 0.25e9));
        // Per lock, written under it: acquisitions after the warm-up, the first and the last.
        long[] k = new long[HOLD_MS.length], first = new long[HOLD_MS.length], last = new long[HOLD_MS.length];
        Thread[] all = new Thread[HOLD_MS.length * perLock];
        AtomicLong[] taken = new AtomicLong[HOLD_MS.length], held = new AtomicLong[HOLD_MS.length];
        for (int l = 0; l < HOLD_MS.length; l++) {
            ReentrantLock lock = new ReentrantLock();
            long hold = HOLD_MS[l];
            int me = l;
            AtomicLong n = taken[l] = new AtomicLong(), ns = held[l] = new AtomicLong();
            for (int t = 0; t < perLock; t++) {
                Thread th = new Thread(() -> {
                    try {
                        while (System.nanoTime() < end) {
                            lock.lock();
                            long t0 = System.nanoTime();
                            if (t0 >= warm && t0 <= end) {
                                if (k[me]++ == 0)
                                    first[me] = t0;
                                last[me] = t0;
                            }
                            try {
                                Thread.sleep(hold);
                            } finally {
                                ns.addAndGet(System.nanoTime() - t0);
                                n.incrementAndGet();
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
        double ops = 0;
        for (int l = 0; l < HOLD_MS.length; l++)
            if (k[l] > 1)
                ops += (k[l] - 1) / ((last[l] - first[l]) / 1e9);
        System.out.printf("ops_per_sec %.3f%n", ops);
        StringBuilder out = new StringBuilder("{\"holds\":[");
        for (int l = 0; l < HOLD_MS.length; l++) {
            long n = taken[l].get();
            out.append(l > 0 ? "," : "").append("{\"preset_ms\":").append(HOLD_MS[l]).append(",\"taken\":").append(n)
               .append(",\"mean_hold_ns\":").append(n > 0 ? held[l].get() / n : 0)
               .append(",\"mean_interval_ns\":").append(k[l] > 1 ? (last[l] - first[l]) / (k[l] - 1) : 0).append("}");
        }
        System.out.println(out.append("]}"));
    }
}
