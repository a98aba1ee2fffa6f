import java.util.concurrent.locks.LockSupport;

/** N threads named parked-0..N-1 park on one blocker of class
 *  ParkedThreads$Gate until the JVM exits. Prints "ready PID" once all are
 *  parked, then waits for standard input to close. */
public class ParkedThreads {
    static final class Gate {}
    static final Gate GATE = new Gate();

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        Thread[] threads = new Thread[n];
        for (int i = 0; i < n; i++) {
            threads[i] = new Thread(() -> { for (;;) LockSupport.park(GATE); }, "parked-" + i);
            threads[i].setDaemon(true);
            threads[i].start();
        }
        for (Thread t : threads)
            while (LockSupport.getBlocker(t) != GATE)
                Thread.sleep(5);
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) { }
    }
}
