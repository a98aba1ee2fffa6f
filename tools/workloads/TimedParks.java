import java.util.concurrent.locks.LockSupport;

/** Threads that park for 1 ms at a time until the deadline: two with the
 *  blocker TimedParks$Gate and two with no blocker. Every park ends by its
 *  timeout. Prints the number of parks of each kind it made and the time
 *  they took, as it measured them, and its pid.
 *  usage: java TimedParks [SECONDS] */
public class TimedParks {
    static final class Gate {}
    static final Gate GATE = new Gate();

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long[] counts = new long[4], nanos = new long[4];
        Thread[] ts = new Thread[4];
        for (int i = 0; i < 4; i++) {
            final int me = i;
            ts[i] = new Thread(() -> {
                while (System.nanoTime() < end) {
                    long t0 = System.nanoTime();
                    if (me < 2)
                        LockSupport.parkNanos(GATE, 1_000_000);
                    else
                        LockSupport.parkNanos(1_000_000);
                    nanos[me] += System.nanoTime() - t0;
                    counts[me]++;
                }
            }, (i < 2 ? "gate-" : "free-") + i);
            ts[i].start();
        }
        for (Thread t : ts)
            t.join();
        System.out.println("{\"gate_parks\":" + (counts[0] + counts[1]) + ",\"free_parks\":" + (counts[2] + counts[3])
                + ",\"gate_ns\":" + (nanos[0] + nanos[1]) + ",\"free_ns\":" + (nanos[2] + nanos[3])
                + ",\"pid\":" + ProcessHandle.current().pid() + "}");
    }
}
