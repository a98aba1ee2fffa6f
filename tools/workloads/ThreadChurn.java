import java.util.concurrent.locks.LockSupport;

/** Short-lived threads, one started every 20 ms, each parking 20 times for
 *  1 ms on ThreadChurn$Gate before it ends: most live less than one of
 *  parktrace's thread-list refreshes. Prints how many parks they made.
 *  The first starts a second late: parks before parktrace has found the
 *  JVM are futex waits (README, Limits), and on a busy machine the finding
 *  took longer than the first threads lived.
 *  usage: java ThreadChurn [SECONDS] */
public class ThreadChurn {
    static final class Gate {}
    static final Gate GATE = new Gate();

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        Thread.sleep(1000);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        int started = 0;
        while (System.nanoTime() < end) {
            Thread t = new Thread(() -> {
                for (int i = 0; i < 20; i++)
                    LockSupport.parkNanos(GATE, 1_000_000);
            }, "churn-" + started++);
            t.start();
            Thread.sleep(20);
        }
        Thread.sleep(100);
        System.out.println("{\"parks\":" + started * 20 + "}");
    }
}
