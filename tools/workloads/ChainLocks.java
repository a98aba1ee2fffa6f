import java.io.FileWriter;
import java.io.IOException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/* A Java wait chain the workload knows: worker -[ReentrantLock a]-> flusher
 * -[ReentrantLock b]-> writer, who holds b through Thread.sleep. Each
 * round the worker's lock() starts once the flusher is parked behind the
 * writer, and the workload times the part of it during which the whole
 * chain stood (until the writer let go).
 *
 * usage: java ChainLocks ROUNDS HOLD_MS REPORT.json [START_MS]
 * START_MS: a pause before the rounds (a tracer finding the JVM first)
 * The report: {"waits":N,"wait_ns":NS,"chain_ns":NS,"pid":N} */
public class ChainLocks {
    static final ReentrantLock a = new ReentrantLock(), b = new ReentrantLock();
    static volatile int holderReady, middleReady, firstWaiting, firstDone;
    static volatile long releasedNs;

    static void until(java.util.function.IntSupplier v, int r) {
        while (v.getAsInt() < r)
            LockSupport.parkNanos(100_000);
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        long holdMs = Long.parseLong(args[1]);
        if (args.length > 3)
            Thread.sleep(Long.parseLong(args[3]));
        Thread writer = new Thread(() -> {
            for (int r = 1; r <= rounds; r++) {
                b.lock();
                holderReady = r;
                final int round = r;
                until(() -> firstWaiting, round);
                try {
                    Thread.sleep(holdMs);
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
                a.lock();
                middleReady = r;
                b.lock();       // behind the writer
                b.unlock();
                a.unlock();
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
            a.lock();
            long t1 = System.nanoTime(), released = releasedNs;
            a.unlock();
            firstDone = r;
            waits++;
            waitNs += t1 - t0;
            if (released > t0 && released <= t1)
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
