import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The real-server suite's servlet for Tomcat 10: every request updates one
 * shared resource, a small table guarded by one ReentrantLock, for about
 * HOLD_NS of work inside the lock and as much outside it. Under wrk with
 * more connections than CPUs, Tomcat's request threads queue on the lock:
 * jvm-park rows of class ReentrantLock$NonfairSync in parktrace, and
 * jdk.ThreadPark events of the same class in JFR.
 */
public class ParkServlet extends HttpServlet {
    static final ReentrantLock LOCK = new ReentrantLock();
    static final long[] TABLE = new long[1024];
    static final long HOLD_NS = Long.getLong("pt.holdNs", 50_000);
    static long served;

    static long spin(long ns, long seed) {
        long end = System.nanoTime() + ns, x = seed;
        while (System.nanoTime() < end)
            for (int i = 0; i < 64; i++)
                x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        long x = spin(HOLD_NS / 2, Thread.currentThread().getId());
        long n;
        LOCK.lock();
        try {
            x = spin(HOLD_NS, x);
            TABLE[(int) (x & (TABLE.length - 1))] += x;
            n = ++served;
        } finally {
            LOCK.unlock();
        }
        resp.setContentType("text/plain");
        resp.getWriter().println("served " + n);
    }
}
