import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;

/** Three kinds of waiting at once, as an embedded database's threads wait:
 *  - row locks: TX threads each take two of HOT rows as a transaction, one
 *    new Tx object per transaction; a thread that finds a row taken waits
 *    on the holder's Tx with Object.wait(10 ms) until it ends (many
 *    short-lived objects, each waited on a few times);
 *  - a contended ReentrantLock, held 100 us by three threads in turn;
 *  - a pool of four workers taking small tasks from a queue.
 *  It starts its threads once a line arrives on stdin (so that tracers
 *  started beforehand see every wait), runs SECONDS, and prints one JSON
 *  line: the time its threads spent in those waits, measured around the
 *  calls, and the counts.
 *  usage: java ShortLivedWaits [SECONDS] [TX] [HOT] */
public class ShortLivedWaits {
    static final class Warmup {
    }

    static final class Tx {
        boolean done;
    }

    static long spin(long ns) {
        long end = System.nanoTime() + ns, x = 0;
        while (System.nanoTime() < end)
            x++;
        return x;
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 4;
        int txThreads = args.length > 1 ? Integer.parseInt(args[1]) : 6;
        int hot = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        AtomicReferenceArray<Tx> rows = new AtomicReferenceArray<>(hot);
        AtomicLong txWaitNs = new AtomicLong(), txWaits = new AtomicLong(), txDone = new AtomicLong();
        AtomicLong lockNs = new AtomicLong(), locked = new AtomicLong(), tasks = new AtomicLong();
        ReentrantLock lock = new ReentrantLock();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(4, 4, 1, TimeUnit.MINUTES, new ArrayBlockingQueue<>(64));
        pool.prestartAllCoreThreads();
        System.out.println("ready");
        System.out.flush();
        // Until the go, a timed wait now and then on a Warmup: a tracer
        // that charges it to its class knows this JVM.
        Object warmup = new Warmup();
        while (System.in.available() == 0) {
            synchronized (warmup) {
                warmup.wait(20);
            }
        }
        long end = System.nanoTime() + (long) (seconds * 1e9);

        Runnable tx = () -> {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            while (System.nanoTime() < end) {
                Tx mine = new Tx();
                int a = r.nextInt(hot), b = r.nextInt(hot);
                int[] want = a == b ? new int[] {a} : new int[] {Math.min(a, b), Math.max(a, b)};
                int got = 0;
                for (int row : want) {
                    while (!rows.compareAndSet(row, null, mine)) {
                        Tx holder = rows.get(row);
                        if (holder == null)
                            continue;
                        long t0 = System.nanoTime();
                        synchronized (holder) {
                            while (!holder.done) {
                                try {
                                    holder.wait(10);
                                } catch (InterruptedException e) {
                                    return;
                                }
                            }
                        }
                        txWaitNs.addAndGet(System.nanoTime() - t0);
                        txWaits.incrementAndGet();
                    }
                    got++;
                }
                // Mostly short: a notify then often finds its waiters still
                // on their way to sleep (the race of 2026-11-28's fix).
                spin(r.nextInt(4) == 0 ? 100_000 + r.nextInt(200_000) : r.nextInt(20_000));
                for (int i = 0; i < got; i++)
                    rows.set(want[i], null);
                synchronized (mine) {
                    mine.done = true;
                    mine.notifyAll();
                }
                txDone.incrementAndGet();
            }
        };
        Runnable locker = () -> {
            while (System.nanoTime() < end) {
                long t0 = System.nanoTime();
                lock.lock();
                lockNs.addAndGet(System.nanoTime() - t0);
                try {
                    spin(100_000);
                } finally {
                    lock.unlock();
                }
                locked.incrementAndGet();
                spin(20_000);
            }
        };
        Thread[] threads = new Thread[txThreads + 3];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = new Thread(i < txThreads ? tx : locker, (i < txThreads ? "tx-" : "locker-") + i);
            threads[i].start();
        }
        while (System.nanoTime() < end) {
            try {
                pool.execute(() -> {
                    spin(20_000);
                    tasks.incrementAndGet();
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // a full queue: the producer outran the pool
            }
            Thread.sleep(1);
        }
        for (Thread t : threads)
            t.join();
        pool.shutdown();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        System.out.printf("{\"pid\":%d,\"tx_threads\":%d,\"tx_wait_ns\":%d,\"tx_waits\":%d,\"transactions\":%d,"
                + "\"lock_ns\":%d,\"locked\":%d,\"tasks\":%d}%n", ProcessHandle.current().pid(), txThreads,
                txWaitNs.get(), txWaits.get(), txDone.get(), lockNs.get(), locked.get(), tasks.get());
    }
}
