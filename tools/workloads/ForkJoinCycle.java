/** Free Lunch's fork-join (its Fig. 3): a master and 4 workers share one
 *  monitor. Each cycle the master hands out work with notifyAll and waits
 *  until every worker has merged its result under the monitor (a fixed
 *  MERGE_US of work there). The less parallel work per cycle, the more of
 *  the time goes to the monitor. Prints {"cycles":N,...}: besides the
 *  cycles, what the workload timed itself: work_ns, each worker's parallel
 *  work per cycle (spun); join_wait_ns, the time workers waited to enter
 *  the monitor for the merge (the join), summed; idle_ns, the time all five
 *  threads spent in Object.wait (waiting for work or for the workers, and
 *  getting the monitor back after it), summed; and alive_ns, the five
 *  threads' lifetimes, summed (from the master's start, its first moment).
 *  CSP's working time is alive_ns - idle_ns.
 *  usage: java ForkJoinCycle [SECONDS] [WORK_US] [MERGE_US] */
public class ForkJoinCycle {
    static final class Board {
        long generation;
        int pending;
        boolean done;
    }

    static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end)
            Thread.onSpinWait();
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        long workNs = (args.length > 1 ? Long.parseLong(args[1]) : 1000) * 1000;
        long mergeNs = (args.length > 2 ? Long.parseLong(args[2]) : 200) * 1000;
        Board b = new Board();
        Thread[] workers = new Thread[4];
        long t0 = System.nanoTime();
        long[] joinWait = new long[workers.length + 1], idle = new long[workers.length + 1],
               alive = new long[workers.length + 1];
        for (int i = 0; i < workers.length; i++) {
            final int me = i;
            workers[i] = new Thread(() -> {
                long seen = 0, born = System.nanoTime();
                try {
                    while (true) {
                        synchronized (b) {
                            while (b.generation == seen && !b.done) {
                                long w = System.nanoTime();
                                b.wait();
                                idle[me] += System.nanoTime() - w;
                            }
                            if (b.done)
                                break;
                            seen = b.generation;
                        }
                        spin(workNs);
                        long j = System.nanoTime();
                        synchronized (b) {
                            joinWait[me] += System.nanoTime() - j;
                            spin(mergeNs);
                            if (--b.pending == 0)
                                b.notifyAll();
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                alive[me] = System.nanoTime() - born;
            }, "worker-" + i);
            workers[i].start();
        }
        long end = System.nanoTime() + (long) (seconds * 1e9), cycles = 0;
        synchronized (b) {
            while (System.nanoTime() < end) {
                b.pending = workers.length;
                b.generation++;
                b.notifyAll();
                while (b.pending > 0) {
                    long w = System.nanoTime();
                    b.wait();
                    idle[workers.length] += System.nanoTime() - w;
                }
                cycles++;
            }
            b.done = true;
            b.notifyAll();
        }
        long m = System.nanoTime();
        for (Thread t : workers)
            t.join();
        idle[workers.length] += System.nanoTime() - m; // Thread.join: Object.wait on the thread
        alive[workers.length] = System.nanoTime() - t0;
        long joinNs = 0, idleNs = 0, aliveNs = 0;
        for (int i = 0; i <= workers.length; i++) {
            joinNs += joinWait[i];
            idleNs += idle[i];
            aliveNs += alive[i];
        }
        System.out.println("{\"cycles\":" + cycles + ",\"work_ns\":" + workNs + ",\"join_wait_ns\":" + joinNs
                           + ",\"idle_ns\":" + idleNs + ",\"alive_ns\":" + aliveNs + "}");
    }
}
