import java.util.concurrent.locks.LockSupport;

/** LockSupport ping-pong, the worst case for a park tracer: two threads
 *  unpark each other in turn, so every operation is a park that sleeps.
 *  Prints round trips per second on its last line, like the C workloads.
 *  usage: java PingPong [-s SECONDS] */
public class PingPong {
    static volatile Thread ping, pong;
    static volatile int turn;
    static volatile boolean stop;

    public static void main(String[] args) throws Exception {
        double seconds = 2;
        for (int i = 0; i + 1 < args.length; i++)
            if (args[i].equals("-s"))
                seconds = Double.parseDouble(args[i + 1]);
        long[] rounds = new long[1];
        ping = new Thread(() -> {
            while (!stop) {
                while (turn != 0 && !stop)
                    LockSupport.park(PingPong.class);
                turn = 1;
                rounds[0]++;
                LockSupport.unpark(pong);
            }
        }, "ping");
        pong = new Thread(() -> {
            while (!stop) {
                while (turn != 1 && !stop)
                    LockSupport.park(PingPong.class);
                turn = 0;
                LockSupport.unpark(ping);
            }
        }, "pong");
        // Warm up, then measure.
        ping.start();
        pong.start();
        Thread.sleep(500);
        long r0 = rounds[0], t0 = System.nanoTime();
        Thread.sleep((long) (seconds * 1000));
        long r1 = rounds[0], t1 = System.nanoTime();
        stop = true;
        LockSupport.unpark(ping);
        LockSupport.unpark(pong);
        ping.join();
        pong.join();
        System.out.printf("ops_per_sec %.0f%n", (r1 - r0) / ((t1 - t0) / 1e9));
    }
}
