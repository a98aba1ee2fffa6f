"""PostgreSQL 15 under pgbench (TPC-B like), on 127.0.0.1, as user postgres.

A fresh cluster (initdb, trust authentication on loopback) in a private
directory; pgbench -i at a small scale, then `pgbench -c 8 -j 2` for the
load. Eight clients updating a scale of 2 (2 branch rows) queue on row locks
and on LWLocks (WAL insertion and WAL write, buffer content, ProcArray); a
backend that waits sleeps on its semaphore, an unnamed POSIX semaphore in
shared memory: a shared futex wait. PostgreSQL forks a process per
connection, so pids() is the postmaster and all its children once the
clients are connected."""
import signal
import time

from common import Server, ServerError, as_user, children, report_value, run

BIN = "/usr/lib/postgresql/15/bin"
SCALE = 2
CLIENTS = 8


class Postgres(Server):
    name = "postgres"

    def __init__(self):
        super().__init__(user="postgres")

    def start(self):
        data = self.owned_dir("data")
        run_dir = self.owned_dir("run")
        run([f"{BIN}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8",
             "--locale=C"], timeout=60, what="initdb", preexec_fn=as_user("postgres"), cwd=self.dir)
        self.spawn([f"{BIN}/postgres", "-D", data, "-p", str(self.port), "-c", "listen_addresses=127.0.0.1",
                    "-c", f"unix_socket_directories={run_dir}", "-c", "shared_buffers=64MB",
                    "-c", "max_connections=40", "-c", "logging_collector=off"])
        self.wait_port()
        # The port accepts before the database does (startup recovery).
        deadline = time.time() + self.start_timeout
        while True:
            try:
                run(self.client("psql") + ["-c", "select 1"], timeout=10, what="psql")
                break
            except ServerError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        run(self.client("pgbench") + ["-i", "-q", "-s", str(SCALE), "postgres"], timeout=60, what="pgbench -i")

    def client(self, tool):
        """TOOL (psql or pgbench) on our server's TCP port, as postgres."""
        argv = [f"{BIN}/{tool}", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"]
        return argv + ["-d", "postgres"] if tool == "psql" else argv

    def load(self, seconds):
        p = self.spawn_load(self.client("pgbench") + ["-c", str(CLIENTS), "-j", "2", "-T", str(int(seconds)),
                                                      "-n", "postgres"])
        # Its clients are connected when the server has a backend for each.
        deadline = time.time() + 20
        while True:
            self.check_load_alive(p)
            try:
                n = int(run(self.client("psql") + ["-At", "-c", "SELECT count(*) FROM pg_stat_activity "
                                                   "WHERE application_name = 'pgbench'"], timeout=10).strip())
            except (ServerError, ValueError):
                n = 0
            if n >= CLIENTS:
                break
            if time.time() > deadline:
                raise ServerError(f"postgres: pgbench's {CLIENTS} clients did not connect within 20 s "
                                  f"({n} did): {self.load_output(p)[-400:]}")
            time.sleep(0.1)
        return p

    def pids(self):
        return [self.proc.pid] + children(self.proc.pid)

    throughput_unit = "transactions/s (pgbench tps)"

    def throughput(self, output):
        """pgbench's `tps = N (without initial connection time)`."""
        return report_value("postgres", r"^tps = ([0-9.]+)", output)

    def graceful_signal(self):
        return signal.SIGINT      # fast shutdown


if __name__ == "__main__":
    from common import main
    main(Postgres)
