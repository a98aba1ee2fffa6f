import java.util.concurrent.locks.LockSupport;

/** Threads started as fast as the JVM can: rounds of 8, each thread
 *  parking once for 100 us on ThreadStorm$Gate before it ends, some
 *  thousands of threads a second. Every start and end publishes a new
 *  thread list in the JVM (ThreadsSMRSupport), so a reader of that list
 *  from outside finds it replaced under its reads. The first round starts
 *  a second late, once parktrace has found the JVM. Prints how many
 *  threads it started and how many parks they made.
 *  usage: java ThreadStorm [SECONDS] */
public class ThreadStorm {
    static final class Gate {}
    static final Gate GATE = new Gate();

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        Thread.sleep(1000);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        int started = 0;
        Thread[] round = new Thread[8];
        while (System.nanoTime() < end) {
            for (int i = 0; i < round.length; i++) {
                round[i] = new Thread(() -> LockSupport.parkNanos(GATE, 100_000), "storm-" + started++);
                round[i].start();
            }
            for (Thread t : round)
                t.join();
        }
        System.out.println("{\"threads\":" + started + ",\"parks\":" + started + "}");
    }
}
