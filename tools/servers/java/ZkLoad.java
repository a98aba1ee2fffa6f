import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The real-server suite's load client for ZooKeeper: THREADS threads over
 * SESSIONS client sessions, each in a loop of synchronous requests on a few
 * shared znodes (setData on one of 4 nodes, getData, and every 8th round
 * an ephemeral sequential create and its delete) for SECONDS. Writes pass
 * through the server's whole request pipeline. Prints `ops N` at the end,
 * then `ops_per_sec R` (over the time its threads ran).
 * usage: ZkLoad HOST:PORT THREADS SESSIONS SECONDS
 */
public class ZkLoad {
    public static void main(String[] args) throws Exception {
        String hosts = args[0];
        int threads = Integer.parseInt(args[1]), sessions = Integer.parseInt(args[2]);
        long end = System.nanoTime() + (long) (Double.parseDouble(args[3]) * 1e9);
        ZooKeeper[] zks = new ZooKeeper[sessions];
        for (int i = 0; i < sessions; i++) {
            CountDownLatch up = new CountDownLatch(1);
            zks[i] = new ZooKeeper(hosts, 30000, e -> {
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected)
                    up.countDown();
            });
            if (!up.await(20, TimeUnit.SECONDS))
                throw new IllegalStateException("no session to " + hosts);
        }
        for (int n = 0; n < 4; n++) {
            try {
                zks[0].create("/pt" + n, new byte[16], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // from an earlier run
            }
        }
        AtomicLong ops = new AtomicLong();
        long t0 = System.nanoTime();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ZooKeeper zk = zks[t % sessions];
            int id = t;
            ts[t] = new Thread(() -> {
                byte[] data = new byte[64];
                long round = 0;
                try {
                    while (System.nanoTime() < end) {
                        String node = "/pt" + (round & 3);
                        data[0] = (byte) round;
                        zk.setData(node, data, -1);
                        zk.getData(node, false, null);
                        if ((round & 7) == id % 8) {
                            String p = zk.create(node + "/e-", data, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                                                 CreateMode.EPHEMERAL_SEQUENTIAL);
                            zk.delete(p, -1);
                            ops.addAndGet(2);
                        }
                        ops.addAndGet(2);
                        round++;
                    }
                } catch (Exception e) {
                    System.out.println("error " + e);
                    System.exit(1);
                }
            }, "zkload-" + t);
            ts[t].start();
        }
        System.out.println("started " + threads);
        for (Thread t : ts)
            t.join();
        System.out.println("ops " + ops.get());
        System.out.printf("ops_per_sec %.1f%n", ops.get() / ((System.nanoTime() - t0) / 1e9));
        for (ZooKeeper zk : zks)
            zk.close();
    }
}
