import java.util.concurrent.locks.ReentrantLock;

/** Where contention is caused: four threads take one lock, and the lock is
 *  only ever released in releaseAfterHold, after a 2 ms hold there. Every
 *  wait on the lock is ended by that method's unlock, so a waker profile
 *  must charge the waits to it.
 *  usage: java WakerBlame [SECONDS] */
public class WakerBlame {
    static void releaseAfterHold(ReentrantLock lock) throws InterruptedException {
        try {
            Thread.sleep(2);
        } finally {
            lock.unlock();
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        ReentrantLock lock = new ReentrantLock();
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                try {
                    while (System.nanoTime() < end) {
                        lock.lock();
                        releaseAfterHold(lock);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "blame-" + i);
            ts[i].start();
        }
        for (Thread t : ts)
            t.join();
    }
}
