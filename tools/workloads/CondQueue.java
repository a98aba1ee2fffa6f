import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** A producer/consumer queue built on a ReentrantLock and its Condition:
 *  two consumers wait for work that one producer adds every 10 ms. Prints
 *  how many times the consumers waited.
 *  usage: java CondQueue [SECONDS] */
public class CondQueue {
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        ReentrantLock lock = new ReentrantLock();
        Condition nonEmpty = lock.newCondition();
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long[] waits = new long[1];
        Runnable consumer = () -> {
            while (System.nanoTime() < end) {
                lock.lock();
                try {
                    while (queue.isEmpty() && System.nanoTime() < end) {
                        waits[0]++;
                        nonEmpty.awaitNanos(100_000_000);
                    }
                    queue.poll();
                } catch (InterruptedException e) {
                    return;
                } finally {
                    lock.unlock();
                }
            }
        };
        Thread c1 = new Thread(consumer, "consumer-1"), c2 = new Thread(consumer, "consumer-2");
        c1.start();
        c2.start();
        while (System.nanoTime() < end) {
            Thread.sleep(10);
            lock.lock();
            try {
                queue.add(1);
                nonEmpty.signal();
            } finally {
                lock.unlock();
            }
        }
        c1.join();
        c2.join();
        System.out.println("{\"waits\":" + waits[0] + "}");
    }
}
