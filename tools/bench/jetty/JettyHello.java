import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.AbstractHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/** A small Jetty 9 server for the benchmark: each request looks a key up in
 *  a shared, synchronized map (a session-store stand-in, so requests meet on
 *  a monitor as real handlers do), hashes a little and answers a short text.
 *  Listens on 127.0.0.1 at an ephemeral port and prints `port N` once
 *  started; stops when stdin closes. Given a PORT, listens there and runs
 *  until it is killed (the server suite, tools/servers/jetty.py).
 *  usage: java -cp JETTY_JARS:. JettyHello [THREADS [PORT]] */
public class JettyHello extends AbstractHandler {
    private final Map<Integer, Long> hits = new HashMap<>();

    @Override
    public void handle(String target, Request base, HttpServletRequest req, HttpServletResponse resp)
            throws IOException {
        int key = target.hashCode() & 63;
        long n;
        synchronized (hits) {
            n = hits.merge(key, 1L, Long::sum);
        }
        byte[] body = ("hello " + Long.toHexString(n * 0x9E3779B97F4A7C15L) + "\n").getBytes(StandardCharsets.UTF_8);
        resp.setContentType("text/plain");
        resp.setContentLength(body.length);
        resp.setStatus(200);
        resp.getOutputStream().write(body);
        base.setHandled(true);
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 16;
        Server server = new Server(new QueuedThreadPool(threads, threads));
        ServerConnector http = new ServerConnector(server);
        http.setHost("127.0.0.1");
        http.setPort(args.length > 1 ? Integer.parseInt(args[1]) : 0);
        server.addConnector(http);
        server.setHandler(new JettyHello());
        server.start();
        System.out.println("port " + http.getLocalPort());
        System.out.flush();
        if (args.length > 1) {
            server.join();
            return;
        }
        while (System.in.read() >= 0) {
            // until the benchmark closes stdin
        }
        server.stop();
    }
}
