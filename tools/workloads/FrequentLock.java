import java.util.concurrent.locks.ReentrantLock;

/** The thesis's "frequently acquired lock" pattern (Listing 5.2): two fair
 *  ReentrantLocks held 32 ms, the first chosen three times as often as the
 *  second. Prints how often each was taken.
 *  usage: java FrequentLock [SECONDS] [THREADS] */
public class FrequentLock {
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        ReentrantLock often = new ReentrantLock(true), rarely = new ReentrantLock(true);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long[] taken = new long[2];
        Thread[] ts = new Thread[n];
        for (int t = 0; t < n; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                long i = me;
                try {
                    while (System.nanoTime() < end) {
                        boolean first = i++ % 4 != 3;
                        ReentrantLock l = first ? often : rarely;
                        l.lock();
                        try {
                            taken[first ? 0 : 1]++;
                            Thread.sleep(32);
                        } finally {
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
        System.out.println("{\"often\":" + taken[0] + ",\"rarely\":" + taken[1] + "}");
    }
}
