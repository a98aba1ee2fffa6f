import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** Threads that park from the very start of main, with no warm-up: a token
 *  passed round THREADS threads in turn, each waiting for its turn on one
 *  Condition of one ReentrantLock (EarlyParks.pass). Started with
 *  `parktrace -- java EarlyParks`, its first parks come before parktrace has
 *  found the JVM (they are futex waits, their stacks walked without the
 *  JVM's layout) and the JVM exits before the final report: every Java
 *  frame must have been named while it ran.
 *  Prints {"passes": N} on its last line.
 *  usage: java EarlyParks [SECONDS] [THREADS] */
public class EarlyParks {
    static final ReentrantLock lock = new ReentrantLock();
    static final Condition turn = lock.newCondition();
    static int next;
    static long passes;
    static volatile boolean stop;

    /** Waits for turn ME of N, then hands the token on. */
    static void pass(int me, int n) throws InterruptedException {
        lock.lock();
        try {
            while (next != me && !stop)
                turn.await();
            next = (me + 1) % n;
            passes++;
            turn.signalAll();
        } finally {
            lock.unlock();
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        Thread[] threads = new Thread[n];
        for (int i = 0; i < n; i++) {
            final int me = i;
            threads[i] = new Thread(() -> {
                try {
                    while (!stop)
                        pass(me, n);
                } catch (InterruptedException e) {
                    // ends the thread
                }
            }, "passer-" + i);
            threads[i].start();
        }
        Thread.sleep((long) (seconds * 1000));
        stop = true;
        lock.lock();
        try {
            turn.signalAll();
        } finally {
            lock.unlock();
        }
        for (Thread t : threads)
            t.join();
        System.out.println("{\"passes\": " + passes + "}");
    }
}
