import java.util.concurrent.locks.ReentrantLock;

/** One ReentrantLock that a moving garbage collector relocates halfway:
 *  THREADS threads contend on it for SECONDS (phase 1), a full collection
 *  moves it (run with -XX:+UseSerialGC: its full collection compacts every
 *  live object of the young generation into the old one, so the lock,
 *  allocated just before, changes address), and they contend again for
 *  half as long (phase 2), so that the phases' times tell them apart. Each lock() that found the lock taken is timed; the
 *  last line gives, per phase, how many did and their time, as JSON.
 *  DELAY_MS holds the threads back at first, so that a tracer that
 *  recognises JVMs after a while sees every park.
 *  usage: java -XX:+UseSerialGC MovingLock [SECONDS] [THREADS] [DELAY_MS] */
public class MovingLock {
    static final ReentrantLock[] lock = new ReentrantLock[1];

    /** Contends for SECONDS; returns {blocked lock() calls, their ns}. */
    static long[] contend(double seconds, int n) throws InterruptedException {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long[][] got = new long[n][2];
        Thread[] ts = new Thread[n];
        for (int t = 0; t < n; t++) {
            final long[] mine = got[t];
            ts[t] = new Thread(() -> {
                ReentrantLock l = lock[0];
                try {
                    while (System.nanoTime() < end) {
                        if (!l.tryLock()) {
                            long t0 = System.nanoTime();
                            l.lock();
                            mine[1] += System.nanoTime() - t0;
                            mine[0]++;
                        }
                        try {
                            Thread.sleep(1);
                        } finally {
                            l.unlock();
                        }
                        Thread.sleep(0, 500_000);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "moving-" + t);
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        long[] sum = new long[2];
        for (long[] g : got) {
            sum[0] += g[0];
            sum[1] += g[1];
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 1;
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        if (args.length > 2)
            Thread.sleep(Long.parseLong(args[2]));
        lock[0] = new ReentrantLock();
        long[] before = contend(seconds, n);
        System.gc();
        long[] after = contend(seconds / 2, n);
        System.out.println("{\"phases\":[{\"blocked\":" + before[0] + ",\"blocked_ns\":" + before[1]
                           + "},{\"blocked\":" + after[0] + ",\"blocked_ns\":" + after[1] + "}]}");
    }
}
