import java.util.concurrent.locks.LockSupport;

/** N threads named parked-0..N-1 park until the JVM exits; prints "ready"
 *  and its pid, then waits for standard input to close. */
public class ParkedThreads {
    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> { for (;;) LockSupport.park(); }, "parked-" + i);
            t.setDaemon(true);
            t.start();
        }
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) { }
    }
}
