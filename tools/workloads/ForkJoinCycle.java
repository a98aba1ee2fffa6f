/** Free Lunch's fork-join (its Fig. 3): a master and 4 workers share one
 *  monitor. Each cycle the master hands out work with notifyAll and waits
 *  until every worker has merged its result under the monitor (a fixed
 *  MERGE_US of work there). The less parallel work per cycle, the more of
 *  the time goes to the monitor. Prints {"cycles":N}.
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
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Thread(() -> {
                long seen = 0;
                try {
                    while (true) {
                        synchronized (b) {
                            while (b.generation == seen && !b.done)
                                b.wait();
                            if (b.done)
                                return;
                            seen = b.generation;
                        }
                        spin(workNs);
                        synchronized (b) {
                            spin(mergeNs);
                            if (--b.pending == 0)
                                b.notifyAll();
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "worker-" + i);
            workers[i].start();
        }
        long end = System.nanoTime() + (long) (seconds * 1e9), cycles = 0;
        synchronized (b) {
            while (System.nanoTime() < end) {
                b.pending = workers.length;
                b.generation++;
                b.notifyAll();
                while (b.pending > 0)
                    b.wait();
                cycles++;
            }
            b.done = true;
            b.notifyAll();
        }
        for (Thread t : workers)
            t.join();
        System.out.println("{\"cycles\":" + cycles + "}");
    }
}
