import java.util.concurrent.locks.LockSupport;

/** Parks that never block: the thread hands itself the permit first, so
 *  every LockSupport.park returns at once. A tracer must not call these
 *  waits. Prints {"fast":N} with the number of such parks made.
 *  usage: java FastParks [COUNT] */
public class FastParks {
    static final class Token {}

    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        Token token = new Token();
        // Give the tracer time to find this JVM before the first park.
        Thread.sleep(600);
        for (int i = 0; i < count; i++) {
            LockSupport.unpark(Thread.currentThread());
            LockSupport.park(token);
        }
        // Stay alive a moment, as a real program would, so the tracer can
        // read the blocker's class from this JVM.
        Thread.sleep(500);
        System.out.println("{\"fast\":" + count + "}");
    }
}
