import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The real-server suite's load for embedded Java SQL databases (H2, HSQLDB,
 * Derby from Debian): the database runs in this JVM, so this JVM is the
 * process to trace. Creates a table of ROWS accounts, then THREADS worker
 * threads, each with a connection of its own (autocommit off), loop over
 * short transactions for SECONDS: move an amount between 2 distinct
 * accounts of a hot set of HOT_ROWS (two UPDATEs, in ascending key order
 * so that transactions wait for each other's row locks without deadlocking
 * in the usual case), then commit. A transaction that fails with a lock
 * timeout, a deadlock or a serialization failure is rolled back and
 * counted as a retry; any other error ends the run (exit 1).
 *
 * The lock timeout belongs to the database: H2 `;LOCK_TIMEOUT=10000` in
 * the URL; Derby the derby.locks.waitTimeout system property (set here to
 * 10 s, with derby.locks.deadlockTimeout 1 s, unless given with -D);
 * HSQLDB waits without a timeout.
 *
 * Prints `started THREADS` once the workers run, and at the end
 *   transactions N retries R seconds S threads T
 *   transactions_per_sec X
 * (also from a shutdown hook when the run is interrupted, as by SIGINT).
 * Exit 0; a setup failure prints one `error ...` line and exits 2, a
 * worker's unexpected error one `error worker: ...` line and exit 1.
 * usage: EmbeddedDbLoad JDBC_URL [THREADS [SECONDS [HOT_ROWS]]]
 */
public class EmbeddedDbLoad {
    static final int ROWS = 1000;
    static final AtomicLong transactions = new AtomicLong(), retries = new AtomicLong();
    static final AtomicBoolean reported = new AtomicBoolean();
    static volatile long t0;
    static int threads;

    static void report() {
        if (!reported.compareAndSet(false, true))
            return;
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.printf("transactions %d retries %d seconds %.2f threads %d%n", transactions.get(),
                          retries.get(), s, threads);
        System.out.printf("transactions_per_sec %.1f%n", transactions.get() / s);
        System.out.flush();
    }

    /** Whether the JVM is exiting (a SIGINT from end_load): H2's own
     * shutdown hook may then close the database under the workers. */
    static boolean shuttingDown() {
        Thread probe = new Thread(() -> { });
        try {
            Runtime.getRuntime().addShutdownHook(probe);
            Runtime.getRuntime().removeShutdownHook(probe);
            return false;
        } catch (IllegalStateException e) {
            return true;
        }
    }

    /** A failure worth retrying: lock timeout, deadlock, serialization. */
    static boolean retryable(SQLException e) {
        for (SQLException x = e; x != null; x = x.getNextException()) {
            String st = x.getSQLState();
            if (st != null && (st.startsWith("40")          // 40001 serialization/deadlock, Derby 40XL1/40XL2
                               || st.equals("HYT00")        // H2 lock timeout
                               || st.equals("90131")))      // H2 concurrent update
                return true;
            Throwable c = x.getCause();
            if (c instanceof SQLException && c != x && retryable((SQLException) c))
                return true;
        }
        return false;
    }

    static void setup(String url, int hot) throws SQLException {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            try {
                s.execute("DROP TABLE accounts");
            } catch (SQLException e) {
                // none yet
            }
            s.execute("CREATE TABLE accounts (id INT NOT NULL PRIMARY KEY, balance BIGINT NOT NULL)");
            c.setAutoCommit(false);
            try (PreparedStatement ins = c.prepareStatement("INSERT INTO accounts (id, balance) VALUES (?, ?)")) {
                for (int i = 0; i < ROWS; i++) {
                    ins.setInt(1, i);
                    ins.setLong(2, 1_000_000L);
                    ins.addBatch();
                }
                ins.executeBatch();
            }
            c.commit();
        }
    }

    public static void main(String[] args) {
        if (args.length < 1) {
            System.out.println("error usage: EmbeddedDbLoad JDBC_URL [THREADS [SECONDS [HOT_ROWS]]]");
            System.exit(2);
        }
        String url = args[0];
        int hot;
        double seconds;
        try {
            threads = args.length > 1 ? Integer.parseInt(args[1]) : 8;
            seconds = args.length > 2 ? Double.parseDouble(args[2]) : 30;
            hot = args.length > 3 ? Integer.parseInt(args[3]) : 16;
            if (threads < 1 || hot < 2 || hot > ROWS || !(seconds > 0))
                throw new IllegalArgumentException("THREADS >= 1, SECONDS > 0, 2 <= HOT_ROWS <= " + ROWS);
        } catch (RuntimeException e) {
            System.out.println("error bad arguments: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (url.startsWith("jdbc:derby:")) {
            if (System.getProperty("derby.locks.waitTimeout") == null)
                System.setProperty("derby.locks.waitTimeout", "10");
            if (System.getProperty("derby.locks.deadlockTimeout") == null)
                System.setProperty("derby.locks.deadlockTimeout", "1");
        }
        Connection[] conns = new Connection[threads];
        try {
            setup(url, hot);
            for (int t = 0; t < threads; t++) {
                conns[t] = DriverManager.getConnection(url);
                conns[t].setAutoCommit(false);
                conns[t].setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            }
        } catch (Exception e) {
            System.out.println("error setup: " + e.toString().replace('\n', ' '));
            System.exit(2);
            return;
        }
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            Connection c = conns[t];
            ts[t] = new Thread(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                try (PreparedStatement up = c.prepareStatement(
                        "UPDATE accounts SET balance = balance + ? WHERE id = ?")) {
                    while (System.nanoTime() < end) {
                        int a = rnd.nextInt(hot), b = rnd.nextInt(hot - 1);
                        if (b >= a)
                            b++;
                        int lo = Math.min(a, b), hi = Math.max(a, b);
                        long amount = rnd.nextInt(1, 100);
                        try {
                            up.setLong(1, -amount);
                            up.setInt(2, lo);
                            up.executeUpdate();
                            up.setLong(1, amount);
                            up.setInt(2, hi);
                            up.executeUpdate();
                            c.commit();
                            transactions.incrementAndGet();
                        } catch (SQLException e) {
                            try {
                                c.rollback();
                            } catch (SQLException r) {
                                // the transaction is gone anyway
                            }
                            if (!retryable(e))
                                throw e;
                            retries.incrementAndGet();
                        }
                    }
                } catch (Exception e) {
                    if (shuttingDown())
                        return;       // SIGINT: the database may close under us; the hook reports
                    System.out.println("error worker: " + e.toString().replace('\n', ' '));
                    System.out.flush();
                    Runtime.getRuntime().halt(1);
                }
            }, "dbload-" + t);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(EmbeddedDbLoad::report, "dbload-report"));
        t0 = System.nanoTime();
        for (Thread t : ts)
            t.start();
        System.out.println("started " + threads);
        System.out.flush();
        try {
            for (Thread t : ts)
                t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        report();
        for (Connection c : conns) {
            try {
                c.close();
            } catch (SQLException e) {
                // closing anyway
            }
        }
        System.exit(0);
    }
}
