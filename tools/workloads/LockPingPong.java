import java.util.concurrent.locks.ReentrantLock;

/** Free Lunch's ping-pong: two threads take turns holding one lock, with no
 *  work outside it, so one always holds and the other always waits: CSP 0.5.
 *  The hold is a busy loop (a sleep would be a wait). Mode "juc" uses a fair
 *  ReentrantLock, so turns strictly alternate (a barging unlocker would take
 *  the lock back before the woken thread runs), "sync" a synchronized
 *  monitor. The threads stop on their own while main waits in join, so main
 *  adds no working time. Prints the rounds, lock_ns (the time both players
 *  spent taking the lock: in lock(), or entering the monitor) and alive_ns
 *  (the two players' lifetimes, summed: their working time, since they
 *  never sleep).
 *  With MAIN "sleep", main first sleeps in Thread.sleep until the players'
 *  end: idle time, which must not change the CSP.
 *  usage: java LockPingPong juc|sync [SECONDS] [HOLD_US] [join|sleep] */
public class LockPingPong {
    static final class Token {}

    static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end)
            Thread.onSpinWait();
    }

    public static void main(String[] args) throws Exception {
        boolean sync = args.length > 0 && args[0].equals("sync");
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 3;
        long holdNs = (args.length > 2 ? Long.parseLong(args[2]) : 500) * 1000;
        ReentrantLock lock = new ReentrantLock(true); // fair: strict turns, as in the reference case
        Token monitor = new Token();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long[] rounds = new long[2], lockNs = new long[2], alive = new long[2];
        Thread[] players = new Thread[2];
        for (int p = 0; p < 2; p++) {
            final int me = p;
            players[p] = new Thread(() -> {
                long born = System.nanoTime();
                while (System.nanoTime() < end) {
                    if (sync) {
                        long t0 = System.nanoTime();
                        synchronized (monitor) {
                            lockNs[me] += System.nanoTime() - t0;
                            spin(holdNs);
                            rounds[me]++;
                        }
                    } else {
                        long t0 = System.nanoTime();
                        lock.lock();
                        lockNs[me] += System.nanoTime() - t0;
                        try {
                            spin(holdNs);
                            rounds[me]++;
                        } finally {
                            lock.unlock();
                        }
                    }
                }
                alive[me] = System.nanoTime() - born;
            }, "player-" + p);
        }
        for (Thread t : players)
            t.start();
        if (args.length > 3 && args[3].equals("sleep")) {
            long left = end - System.nanoTime();
            if (left > 0)
                Thread.sleep(left / 1000000, (int) (left % 1000000));
        }
        for (Thread t : players)
            t.join();
        System.out.println("{\"rounds\":" + (rounds[0] + rounds[1]) + ",\"lock_ns\":" + (lockNs[0] + lockNs[1])
                           + ",\"rounds_each\":[" + rounds[0] + "," + rounds[1] + "],\"alive_ns\":" + (alive[0] + alive[1]) + "}");
    }
}
