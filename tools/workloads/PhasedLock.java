import java.util.concurrent.locks.ReentrantLock;

/** A lock that is contended only in the middle of the run: for SECONDS one
 *  thread takes it alone, for SECONDS four threads fight over it, then one
 *  thread alone again. Each holds the lock for 1 ms of spinning, then
 *  sleeps 1 ms. Prints the wall-clock times (ms since the epoch) at which
 *  the contended stretch began and ended, and what the four threads timed
 *  of the stretch, summed: contended_wait_ns in lock(), contended_idle_ns
 *  in Thread.sleep (idle time), so that CSP there is
 *  wait / (4 x stretch - idle):
 *  {"contended_from":T,"contended_to":T,"contended_wait_ns":N,"contended_idle_ns":N}.
 *  usage: java PhasedLock [SECONDS] */
public class PhasedLock {
    static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end)
            Thread.onSpinWait();
    }

    public static void main(String[] args) throws Exception {
        long stretch = (long) ((args.length > 0 ? Double.parseDouble(args[0]) : 3) * 1e9);
        ReentrantLock lock = new ReentrantLock();
        long t0 = System.nanoTime();
        long from = t0 + stretch, to = t0 + 2 * stretch, end = t0 + 3 * stretch;
        Thread[] ts = new Thread[4];
        long[] waited = new long[ts.length], slept = new long[ts.length];
        for (int i = 0; i < ts.length; i++) {
            final boolean alone = i == 0;
            final int me = i;
            ts[i] = new Thread(() -> {
                try {
                    while (true) {
                        long now = System.nanoTime();
                        if (now >= end)
                            return;
                        if (!alone && (now < from || now >= to)) {
                            // Off duty: a timed sleep, idle by CSP's definition.
                            Thread.sleep(Math.max(1, Math.min(now < from ? from - now : end - now, 50_000_000L) / 1_000_000));
                            continue;
                        }
                        long asked = System.nanoTime();
                        lock.lock();
                        long got = System.nanoTime();
                        // The part of the wait inside the stretch.
                        waited[me] += Math.max(0, Math.min(got, to) - Math.max(asked, from));
                        try {
                            spin(1_000_000);
                        } finally {
                            lock.unlock();
                        }
                        long nap = System.nanoTime();
                        Thread.sleep(1);
                        slept[me] += Math.max(0, Math.min(System.nanoTime(), to) - Math.max(nap, from));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "phased-" + i);
        }
        long wall0 = System.currentTimeMillis();
        for (Thread t : ts)
            t.start();
        for (Thread t : ts)
            t.join();
        long waitedNs = 0, sleptNs = 0;
        for (int i = 0; i < ts.length; i++) {
            waitedNs += waited[i];
            sleptNs += slept[i];
        }
        System.out.println("{\"contended_from\":" + (wall0 + stretch / 1_000_000) + ",\"contended_to\":"
                           + (wall0 + 2 * stretch / 1_000_000) + ",\"contended_wait_ns\":" + waitedNs
                           + ",\"contended_idle_ns\":" + sleptNs + "}");
    }
}
