"""Jetty 9 (Debian's libjetty9-java) serving the benchmark's own handler
(tools/bench/jetty/JettyHello.java: a lookup in a shared synchronized map, a
short text answer) from a 16-thread QueuedThreadPool, under wrk.

The same server as the overhead table's `jetty under wrk`, but started once
and warmed up, as the other servers are: started afresh for every run, its
JIT's state swung the untraced throughput by a third between runs.
JVM flags (JFR for one) come from the jvm_flags argument."""
import os

from common import JAVA, JAVAC, WrkServer, run

JARS = ":".join(f"/usr/share/java/{j}.jar" for j in
                ("jetty9-server", "jetty9-util", "jetty9-http", "jetty9-io", "servlet-api"))
SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench", "jetty",
                      "JettyHello.java")
THREADS = 16


class Jetty(WrkServer):
    name = "jetty"
    connections = 32

    def __init__(self, jvm_flags=()):
        super().__init__()
        self.jvm_flags = list(jvm_flags)
        self.url = f"http://127.0.0.1:{self.port}/item"

    def start(self):
        classes = self.path("classes")
        os.makedirs(classes, exist_ok=True)
        run([JAVAC, "-nowarn", "-d", classes, "-cp", JARS, SOURCE], timeout=90, what="javac")
        self.spawn([JAVA, "-Xmx256m", *self.jvm_flags, "-cp", f"{JARS}:{classes}", "JettyHello",
                    str(THREADS), str(self.port)])
        self.wait_port()


if __name__ == "__main__":
    from common import main
    main(Jetty)
