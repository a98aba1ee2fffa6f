import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/** A fixed thread pool (Executors.newFixedThreadPool: a LinkedBlockingQueue
 *  between one producer and the workers) kept busy by a producer that
 *  submits small tasks, at most IN_FLIGHT of them queued or running at once
 *  (a Semaphore, the bounded-executor idiom). Each task hashes a few
 *  kilobytes of a shared buffer, a few microseconds of CPU. Workers that find
 *  the queue empty park on its notEmpty ConditionObject, workers that meet
 *  another one in take() park on its takeLock (a ReentrantLock), and the
 *  producer parks on the Semaphore when the pool is full.
 *  Prints tasks completed per second (after a warm-up) on its last line, like
 *  the C workloads. With -r MS it also prints `tasks NANOS COUNT` every MS
 *  milliseconds (its clock, tasks done so far), so one JVM can be measured in
 *  phases (tools/bench/pool_vs_jfr.py).
 *  usage: java ThreadPool [-s SECONDS] [-t WORKERS] [-q IN_FLIGHT] [-b BYTES] [-r MS] */
public class ThreadPool {
    static final byte[] DATA = new byte[1 << 20];
    static final LongAdder done = new LongAdder();
    static volatile long sink;

    /** FNV-1a over LEN bytes of DATA from OFF: a stand-in for parsing or
     *  checksumming a small request. */
    static long hash(int off, int len) {
        long h = 0xcbf29ce484222325L;
        for (int i = off; i < off + len; i++)
            h = (h ^ DATA[i]) * 0x100000001b3L;
        return h;
    }

    public static void main(String[] args) throws Exception {
        double seconds = 2;
        int workers = 4, inFlight = 16, bytes = 4096, reportMs = 0;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "-s": seconds = Double.parseDouble(args[i + 1]); break;
                case "-t": workers = Integer.parseInt(args[i + 1]); break;
                case "-q": inFlight = Integer.parseInt(args[i + 1]); break;
                case "-b": bytes = Integer.parseInt(args[i + 1]); break;
                case "-r": reportMs = Integer.parseInt(args[i + 1]); break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        for (int i = 0; i < DATA.length; i++)
            DATA[i] = (byte) (i * 31 + (i >>> 7));
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        Semaphore slots = new Semaphore(inFlight);
        final int len = bytes;
        Thread producer = new Thread(() -> {
            // Task sizes vary from half to one and a half times BYTES, as
            // requests do; the offsets walk the buffer.
            long seed = 1;
            int off = 0;
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    seed = seed * 6364136223846793005L + 1442695040888963407L;
                    final int n = len / 2 + (int) ((seed >>> 33) % (len + 1));
                    final int at = off;
                    off = (off + 4096) % (DATA.length - 2 * len);
                    slots.acquire();
                    pool.execute(() -> {
                        try {
                            sink += hash(at, n);
                        } finally {
                            done.increment();
                            slots.release();
                        }
                    });
                }
            } catch (InterruptedException e) {
                // stop
            }
        }, "producer");
        producer.start();
        // Warm up (JIT), then measure.
        Thread.sleep(500);
        long d0 = done.sum(), t0 = System.nanoTime();
        if (reportMs > 0) {
            for (long end = t0 + (long) (seconds * 1e9); System.nanoTime() < end; ) {
                Thread.sleep(reportMs);
                System.out.printf("tasks %d %d%n", System.nanoTime(), done.sum());
                System.out.flush();
            }
        } else {
            Thread.sleep((long) (seconds * 1000));
        }
        long d1 = done.sum(), t1 = System.nanoTime();
        producer.interrupt();
        producer.join();
        pool.shutdown();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        System.out.printf("ops_per_sec %.0f%n", (d1 - d0) / ((t1 - t0) / 1e9));
    }
}
