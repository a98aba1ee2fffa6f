/** Thread.join as a wait: after DELAY_MS (so that a tracer that recognises
 *  JVMs after a while sees every wait), main starts THREADS threads that
 *  each sleep HOLD_MS, then joins them one by one, timing each join.
 *  Prints {"joins":N,"join_ns":NS} (the time main spent in join, summed).
 *  usage: java ThreadJoin [THREADS] [HOLD_MS] [DELAY_MS] */
public class ThreadJoin {
    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        long holdMs = args.length > 1 ? Long.parseLong(args[1]) : 500;
        Thread.sleep(args.length > 2 ? Long.parseLong(args[2]) : 500);
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            final long ms = holdMs * (i + 1);
            ts[i] = new Thread(() -> {
                try {
                    Thread.sleep(ms);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "joined-" + i);
            ts[i].start();
        }
        long joinNs = 0;
        for (Thread t : ts) {
            long t0 = System.nanoTime();
            t.join();
            joinNs += System.nanoTime() - t0;
        }
        System.out.println("{\"joins\":" + n + ",\"join_ns\":" + joinNs + "}");
    }
}
