import java.io.FileWriter;
import java.io.IOException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/* A Java wait chain the workload knows: worker -[ReentrantLock a]-> flusher
 * -[ReentrantLock b]-> writer, who holds b through Thread.sleep. Each
 * round the worker's lock() starts once the flusher is parked behind the
 * writer, and the workload times the part of it during which the whole
 * chain stood (until the writer let go).
 *
 * MODE monitor: worker -[synchronized m]-> flusher -[ReentrantLock b]->
 * writer, who holds b through Object.wait on an object of its own (a
 * timed wait nobody notifies). Each round has an m of its own, so that
 * no earlier waking on it can stand in for its owner, and each m is
 * inflated first (a wait on it): a monitor's first contention otherwise
 * finds its owner holding it as a stack lock.
 *
 * MODE condition: worker -[a Condition of lock c]-> flusher, who signals
 * it once it got b -[ReentrantLock b]-> writer (Thread.sleep): a
 * condition records no owner, so the thread that woke the worker there
 * (twice in a row) stands in; the first two rounds are not counted.
 *
 * usage: java ChainLocks ROUNDS HOLD_MS REPORT.json [START_MS [MODE]]
 * START_MS: a pause before the rounds (a tracer finding the JVM first);
 * MODE: lock (the default), monitor or condition
 * The report: {"waits":N,"wait_ns":NS,"chain_ns":NS,"pid":N} */
public class ChainLocks {
    static final ReentrantLock a = new ReentrantLock(), b = new ReentrantLock();
    static final ReentrantLock c = new ReentrantLock();
    static final Condition signal = c.newCondition();
    static final Object tick = new Object();
    static Object[] ms;
    static boolean monitor, condition;
    static volatile int signaled;
    static volatile int holderReady, middleReady, firstWaiting, firstDone;
    static volatile long releasedNs;

    static void until(java.util.function.IntSupplier v, int r) {
        while (v.getAsInt() < r)
            LockSupport.parkNanos(100_000);
    }

    /* The writer's hold: asleep, or in Object.wait until HOLD_MS passed. */
    static void hold(long holdMs) throws InterruptedException {
        if (!monitor) {
            Thread.sleep(holdMs);
            return;
        }
        long until = System.nanoTime() + holdMs * 1_000_000;
        synchronized (tick) {
            for (long left = holdMs; left > 0; left = (until - System.nanoTime() + 999_999) / 1_000_000)
                tick.wait(left);
        }
    }

    /* The worker's wait on the first lock of ROUND: a, or that round's m;
     * or for its signal. */
    static void first(int round, Runnable inside) {
        if (condition) {
            c.lock();
            try {
                while (signaled < round)
                    signal.awaitUninterruptibly();
                inside.run();
            } finally {
                c.unlock();
            }
        } else if (monitor) {
            synchronized (ms[round - 1]) {
                inside.run();
            }
        } else {
            a.lock();
            try {
                inside.run();
            } finally {
                a.unlock();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 4 ? args[4] : "lock";
        monitor = mode.equals("monitor");
        condition = mode.equals("condition");
        int warm = condition ? 2 : 0, rounds = Integer.parseInt(args[0]) + warm;
        long holdMs = Long.parseLong(args[1]);
        ms = new Object[rounds];
        for (int r = 0; r < rounds && monitor; r++) {
            ms[r] = new Object();
            synchronized (ms[r]) {
                ms[r].wait(1);
            }
        }
        if (args.length > 3)
            Thread.sleep(Long.parseLong(args[3]));
        Thread writer = new Thread(() -> {
            for (int r = 1; r <= rounds; r++) {
                b.lock();
                holderReady = r;
                final int round = r;
                until(() -> firstWaiting, round);
                try {
                    hold(holdMs);
                } catch (InterruptedException e) {
                    return;
                }
                releasedNs = System.nanoTime();
                b.unlock();
                until(() -> firstDone, round);
            }
        }, "writer");
        Thread flusher = new Thread(() -> {
            for (int r = 1; r <= rounds; r++) {
                final int round = r;
                until(() -> holderReady, round);
                if (condition) {
                    middleReady = round;
                    b.lock();   // behind the writer
                    b.unlock();
                    c.lock();
                    signaled = round;
                    signal.signal();
                    c.unlock();
                } else {
                    first(round, () -> {
                        middleReady = round;
                        b.lock();   // behind the writer
                        b.unlock();
                    });
                }
                until(() -> firstDone, round);
            }
        }, "flusher");
        writer.start();
        flusher.start();
        Thread.currentThread().setName("worker");
        long waits = 0, waitNs = 0, chainNs = 0;
        for (int r = 1; r <= rounds; r++) {
            final int round = r;
            until(() -> middleReady, round);
            while (flusher.getState() != Thread.State.WAITING)
                LockSupport.parkNanos(100_000);
            long t0 = System.nanoTime();
            firstWaiting = r;
            long[] t1 = new long[1];
            first(round, () -> t1[0] = System.nanoTime());
            long released = releasedNs;
            firstDone = r;
            if (r <= warm)
                continue;
            waits++;
            waitNs += t1[0] - t0;
            if (released > t0 && released <= t1[0])
                chainNs += released - t0;
        }
        writer.join();
        flusher.join();
        try (FileWriter f = new FileWriter(args[2])) {
            f.write(String.format("{\"waits\":%d,\"wait_ns\":%d,\"chain_ns\":%d,\"pid\":%d}%n", waits, waitNs, chainNs,
                                  ProcessHandle.current().pid()));
        }
    }
}
