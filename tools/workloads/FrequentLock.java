import java.util.concurrent.locks.ReentrantLock;

/** The thesis's "frequently acquired lock" pattern (Listing 5.2): two fair
 *  ReentrantLocks held 32 ms, the first chosen three times as often as the
 *  second. Prints the pattern's throughput, `ops_per_sec N`: acquisitions
 *  per second of the frequently acquired lock, which the threads queue for
 *  all the time, timed from its first to its last acquisition after a
 *  warm-up (a quarter of the run, at most 500 ms) and before the end.
 *  Its last line is how often each lock was taken, and how often taking it
 *  had to wait (the lock was held or queued for when lock() was called, and
 *  lock() took over 50 us: an uncontended take is a few us and a park and
 *  wake-up at least some tens; on a busy machine a free take that was
 *  descheduled can take longer, so the time alone would overcount), and each
 *  lock's mean hold (timed:
 *  a sleep overshoots its request), as JSON. DELAY_MS holds the threads
 *  back at first, so that a tracer that recognises JVMs after a while sees
 *  every park.
 *  usage: java FrequentLock [SECONDS] [THREADS] [DELAY_MS] */
public class FrequentLock {
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        if (args.length > 2)
            Thread.sleep(Long.parseLong(args[2]));
        ReentrantLock often = new ReentrantLock(true), rarely = new ReentrantLock(true);
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long warm = start + Math.min(500_000_000L, (long) (seconds * 0.25e9));
        long[] taken = new long[2], waited = new long[2], held = new long[2];
        // When each acquisition of the frequent lock happened (written under it).
        long[] at = new long[(int) (seconds * 1000 / 32) + n + 16];
        Thread[] ts = new Thread[n];
        for (int t = 0; t < n; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                long i = me;
                try {
                    while (System.nanoTime() < end) {
                        boolean first = i++ % 4 != 3;
                        ReentrantLock l = first ? often : rarely;
                        boolean busy = l.isLocked() || l.hasQueuedThreads();
                        long t0 = System.nanoTime();
                        l.lock();
                        long t1 = System.nanoTime();
                        try {
                            if (busy && System.nanoTime() - t0 > 50_000)
                                waited[first ? 0 : 1]++;
                            if (first && taken[0] < at.length)
                                at[(int) taken[0]] = System.nanoTime();
                            taken[first ? 0 : 1]++;
                            Thread.sleep(32);
                        } finally {
                            held[first ? 0 : 1] += System.nanoTime() - t1;
                            l.unlock();
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "frequent-" + t);
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        long first = 0, last = 0, k = 0;
        for (int i = 0; i < Math.min(taken[0], at.length); i++) {
            if (at[i] < warm || at[i] > end)
                continue;
            if (k++ == 0)
                first = at[i];
            last = at[i];
        }
        System.out.printf("ops_per_sec %.3f%n", k > 1 ? (k - 1) / ((last - first) / 1e9) : 0.0);
        System.out.println("{\"often\":" + taken[0] + ",\"rarely\":" + taken[1] + ",\"often_waited\":" + waited[0]
                           + ",\"rarely_waited\":" + waited[1] + ",\"often_hold_ns\":" + held[0] / Math.max(taken[0], 1)
                           + ",\"rarely_hold_ns\":" + held[1] / Math.max(taken[1], 1) + "}");
    }
}
