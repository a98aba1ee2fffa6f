"""H2 (Debian's libh2-java, 2.1.214) embedded, under the suite's own JDBC
load, java/EmbeddedDbLoad.java: 8 threads, each in a loop of short
transactions (autocommit off) that update 2 rows of a hot set of 16 of a
1000-row table and commit, so that transactions wait for each other's row
locks.

There is no server process: the database runs inside the load's JVM, so
that JVM is the process to trace (pids(), and self.proc once load() has
started it, for jcmd). start() only compiles the load and makes the
database's directory; the database is created by the load itself. The
port the base class picks is not used. JVM flags (JFR for one) come from
the jvm_flags argument and go to the load's JVM.

H2 2.x (MVStore): a transaction that finds a row locked by another waits in
org.h2.mvstore.tx.Transaction.waitForThisToEnd, an Object.wait on the
blocking Transaction object, one object per transaction
(`;LOCK_TIMEOUT=10000` lets every wait complete).

EmbeddedDb, the shared part, is used by hsqldb.py and derby.py too."""
import os

from common import _live, JAVA, Server, ServerError, compile_java, report_value

THREADS = 8
HOT_ROWS = 16


class EmbeddedDb(Server):
    """An embedded Java database under EmbeddedDbLoad: the load's JVM is
    the server. A subclass sets name, jar and url()."""
    jar = None
    start_timeout = 60          # JVM start, database creation, workers running

    def __init__(self, jvm_flags=(), threads=THREADS, hot_rows=HOT_ROWS):
        super().__init__()
        self.jvm_flags = list(jvm_flags)
        self.threads = threads
        self.hot_rows = hot_rows

    def url(self):
        """The JDBC URL of the database, under self.path("db")."""
        raise NotImplementedError

    def extra_jvm_flags(self):
        return []

    def start(self):
        if not os.path.exists(self.jar):
            raise ServerError(f"{self.name}: {self.jar} missing (run tools/install-deps.sh)")
        _live.append(self)              # stopped at exit like a spawned server
        os.makedirs(self.path("db"), exist_ok=True)
        compile_java(["EmbeddedDbLoad.java"], self.jar, self.path("classes"))

    def load(self, seconds):
        """Starts the JVM with the database and its load for SECONDS; once
        its workers run, it is self.proc, the process to trace."""
        if self.proc is not None and self.proc.poll() is None:
            raise ServerError(f"{self.name}: a load is already running (the database is in its JVM)")
        p = self.spawn_load([JAVA, "-Xmx256m", *self.jvm_flags, *self.extra_jvm_flags(),
                             "-cp", f"{self.jar}:{self.path('classes')}", "EmbeddedDbLoad",
                             self.url(), str(self.threads), str(seconds), str(self.hot_rows)], cwd=self.dir)
        self.wait_load_started(p, self.start_timeout)
        self.proc = p
        return p

    def pids(self):
        if self.proc is None:
            raise ServerError(f"{self.name}: no load running: the database lives in the load's JVM")
        return [self.proc.pid]

    throughput_unit = "transactions/s (EmbeddedDbLoad)"

    def throughput(self, output):
        """Committed transactions over the time the workers ran, from
        `transactions N retries R seconds S threads T`."""
        n = report_value(self.name, r"^transactions (\d+) retries", output)
        s = report_value(self.name, r"^transactions \d+ retries \d+ seconds ([0-9.]+)", output)
        return n / max(s, 1e-9)


class H2(EmbeddedDb):
    name = "h2"
    jar = "/usr/share/java/h2.jar"

    def url(self):
        return f"jdbc:h2:{self.path('db', 'db')};LOCK_TIMEOUT=10000"


if __name__ == "__main__":
    from common import main
    main(H2)
