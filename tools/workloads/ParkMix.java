import java.util.ArrayDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/** Parking on several blocker classes at once, for comparing two tracers
 *  on the same run (tests/integration/test_jfr.py):
 *  - ReentrantLock$NonfairSync: 3 threads share a lock held 8 ms;
 *  - ReentrantLock$FairSync: 3 threads share a fair lock held 4 ms;
 *  - Semaphore$NonfairSync: 4 threads share 2 permits held 6 ms;
 *  - AbstractQueuedSynchronizer$ConditionObject: 2 consumers await work that
 *    a producer adds every 10 ms;
 *  - ParkMix$Gate: 2 threads parkNanos(GATE, 2 ms); <no blocker>: 1 thread
 *    parkNanos(2 ms).
 *  Every thread is started first and then sleeps (a sleep is not a park)
 *  until WARMUP_MS after start, so a tracer that reads the JVM's thread list
 *  now and then knows every thread before the first park. Prints how many
 *  times each kind of thread went round its loop.
 *  usage: java ParkMix [SECONDS] [WARMUP_MS] */
public class ParkMix {
    static final class Gate {}
    static final Gate GATE = new Gate();

    interface Body {
        void run() throws InterruptedException;
    }

    static final String[] NAMES = {"nonfair", "fair", "semaphore", "condition", "gate", "free"};

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        long warmupMs = args.length > 1 ? Long.parseLong(args[1]) : 600;
        long start = System.nanoTime() + warmupMs * 1_000_000;
        long end = start + (long) (seconds * 1e9);
        long[] rounds = new long[NAMES.length];

        ReentrantLock nonfair = new ReentrantLock(), fair = new ReentrantLock(true);
        Semaphore permits = new Semaphore(2);
        ReentrantLock qlock = new ReentrantLock();
        Condition nonEmpty = qlock.newCondition();
        ArrayDeque<Integer> queue = new ArrayDeque<>();

        Body[] bodies = {
            () -> {
                nonfair.lock();
                try {
                    Thread.sleep(8);
                } finally {
                    nonfair.unlock();
                }
                Thread.sleep(1);
            },
            () -> {
                fair.lock();
                try {
                    Thread.sleep(4);
                } finally {
                    fair.unlock();
                }
            },
            () -> {
                permits.acquire();
                try {
                    Thread.sleep(6);
                } finally {
                    permits.release();
                }
                Thread.sleep(1);
            },
            () -> {
                qlock.lock();
                try {
                    while (queue.isEmpty() && System.nanoTime() < end)
                        nonEmpty.awaitNanos(100_000_000);
                    queue.poll();
                } finally {
                    qlock.unlock();
                }
            },
            () -> LockSupport.parkNanos(GATE, 2_000_000),
            () -> LockSupport.parkNanos(2_000_000),
        };
        int[] threads = {3, 3, 4, 2, 2, 1};

        ArrayDeque<Thread> all = new ArrayDeque<>();
        for (int k = 0; k < bodies.length; k++) {
            final int kind = k;
            for (int t = 0; t < threads[k]; t++) {
                Thread th = new Thread(() -> {
                    try {
                        sleepUntil(start);
                        long n = 0;
                        while (System.nanoTime() < end) {
                            bodies[kind].run();
                            n++;
                        }
                        synchronized (rounds) {
                            rounds[kind] += n;
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, NAMES[k] + "-" + t);
                all.add(th);
                th.start();
            }
        }
        sleepUntil(start);
        long produced = 0;
        while (System.nanoTime() < end) {
            Thread.sleep(10);
            qlock.lock();
            try {
                queue.add(1);
                nonEmpty.signal();
            } finally {
                qlock.unlock();
            }
            produced++;
        }
        for (Thread th : all)
            th.join();
        StringBuilder out = new StringBuilder("{\"produced\":" + produced);
        for (int k = 0; k < NAMES.length; k++)
            out.append(",\"").append(NAMES[k]).append("\":").append(rounds[k]);
        System.out.println(out.append("}"));
    }

    static void sleepUntil(long deadline) throws InterruptedException {
        for (long left; (left = deadline - System.nanoTime()) > 0; )
            Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
    }
}
