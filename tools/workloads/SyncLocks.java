/** The thesis's "large critical section" pattern written with
 *  `synchronized` (its Listing 5.1 sync variant), plus Object.wait: three
 *  monitors whose critical sections sleep 4, 16 and 64 ms, each with its own
 *  group of threads; and a queue whose consumer waits in Object.wait for a
 *  producer that notifies every 20 ms. Prints the Object.wait calls and each
 *  monitor's acquisitions and mean hold, timed (a sleep overshoots its
 *  request), and the time spent entering it (entry_ns, summed):
 *  {"waits":N,"holds":[{"preset_ms":4,"taken":N,"mean_hold_ns":NS,"entry_ns":NS},...]}.
 *  DELAY_MS holds the threads back at first, so that a tracer that
 *  recognises JVMs after a while sees every wait.
 *  usage: java SyncLocks [SECONDS] [THREADS_PER_LOCK] [DELAY_MS] */
public class SyncLocks {
    static final long[] HOLD_MS = {4, 16, 64};

    /** The lock objects' own class, so rows are easy to tell apart. */
    static final class Resource {}

    static final class Queue {
        int items;
        long waits;
        boolean done;
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int perLock = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        if (args.length > 2)
            Thread.sleep(Long.parseLong(args[2]));
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread[] all = new Thread[HOLD_MS.length * perLock + 2];
        // Written under the monitor.
        long[] taken = new long[HOLD_MS.length], held = new long[HOLD_MS.length], entry = new long[HOLD_MS.length];
        for (int l = 0; l < HOLD_MS.length; l++) {
            Resource lock = new Resource();
            long hold = HOLD_MS[l];
            int me = l;
            for (int t = 0; t < perLock; t++) {
                all[l * perLock + t] = new Thread(() -> {
                    try {
                        while (System.nanoTime() < end) {
                            long asked = System.nanoTime();
                            synchronized (lock) {
                                long t0 = System.nanoTime();
                                entry[me] += t0 - asked;
                                Thread.sleep(hold);
                                held[me] += System.nanoTime() - t0;
                                taken[me]++;
                            }
                            Thread.sleep(1);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "sync" + hold + "ms-" + t);
            }
        }
        Queue q = new Queue();
        all[all.length - 2] = new Thread(() -> {
            try {
                while (System.nanoTime() < end) {
                    Thread.sleep(20);
                    synchronized (q) {
                        q.items++;
                        q.notifyAll();
                    }
                }
                synchronized (q) {
                    q.done = true;
                    q.notifyAll();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "producer");
        all[all.length - 1] = new Thread(() -> {
            synchronized (q) {
                try {
                    while (!q.done) {
                        if (q.items > 0) {
                            q.items--;
                            continue;
                        }
                        q.waits++;
                        q.wait();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, "consumer");
        for (Thread th : all)
            th.start();
        for (Thread th : all)
            th.join();
        StringBuilder out = new StringBuilder("{\"waits\":" + q.waits + ",\"holds\":[");
        for (int l = 0; l < HOLD_MS.length; l++)
            out.append(l > 0 ? "," : "").append("{\"preset_ms\":").append(HOLD_MS[l]).append(",\"taken\":")
               .append(taken[l]).append(",\"mean_hold_ns\":").append(held[l] / Math.max(taken[l], 1))
               .append(",\"entry_ns\":").append(entry[l]).append("}");
        System.out.println(out.append("]}"));
    }
}
