import java.util.concurrent.locks.ReentrantLock;

/** One call site that waits on objects of two classes: THREADS threads
 *  take, in turn, a fair and a nonfair ReentrantLock in the same method
 *  (held 2 ms, a 1 ms pause after each), so the site's rows have the
 *  classes ReentrantLock$FairSync and ReentrantLock$NonfairSync. After
 *  DELAY_MS, so that a tracer that recognises JVMs after a while sees every
 *  park. Prints the time spent in lock() on each, summed over the threads:
 *  {"fair_ns":NS,"nonfair_ns":NS}.
 *  usage: java MixedSite [SECONDS] [THREADS] [DELAY_MS] */
public class MixedSite {
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        Thread.sleep(args.length > 2 ? Long.parseLong(args[2]) : 500);
        ReentrantLock[] locks = {new ReentrantLock(true), new ReentrantLock(false)};
        long[][] waited = new long[n][2];
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread[] ts = new Thread[n];
        for (int t = 0; t < n; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                try {
                    for (int i = me; System.nanoTime() < end; i++) {
                        ReentrantLock l = locks[i % 2];
                        long asked = System.nanoTime();
                        l.lock();
                        waited[me][i % 2] += System.nanoTime() - asked;
                        try {
                            Thread.sleep(2);
                        } finally {
                            l.unlock();
                        }
                        Thread.sleep(1);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "mixed-" + t);
            ts[t].start();
        }
        long fair = 0, nonfair = 0;
        for (int t = 0; t < n; t++) {
            ts[t].join();
            fair += waited[t][0];
            nonfair += waited[t][1];
        }
        System.out.println("{\"fair_ns\":" + fair + ",\"nonfair_ns\":" + nonfair + "}");
    }
}
