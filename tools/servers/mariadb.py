"""MariaDB under `sysbench oltp_read_write` (16 threads), on 127.0.0.1.

A fresh data directory (mariadb-install-db, owned by user mysql; mariadbd
is started as root with --user=mysql and drops to it, as it refuses to run
as root otherwise), no option files read (--no-defaults), TCP on 127.0.0.1
on a port of its own and a socket in the private directory. sysbench
prepares 4 tables of 10 000 rows, then runs oltp_read_write with 16
threads over the socket."""
import time

from common import Server, ServerError, report_value, run

TABLES = 4
TABLE_SIZE = 10000
THREADS = 16


class MariaDB(Server):
    name = "mariadb"
    stop_timeout = 30

    def __init__(self):
        super().__init__(user=None)      # mariadbd drops to mysql itself (--user)

    def start(self):
        self.sock = self.path("run", "mysqld.sock")
        self.owned_dir("run", user="mysql")
        self.owned_dir("tmp", user="mysql")
        run(["mariadb-install-db", "--no-defaults", f"--datadir={self.path('data')}", "--user=mysql",
             "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"],
            timeout=90, what="mariadb-install-db", cwd=self.dir)
        self.spawn(["mariadbd", "--no-defaults", f"--datadir={self.path('data')}", f"--socket={self.sock}",
                    f"--port={self.port}", "--bind-address=127.0.0.1", "--user=mysql",
                    f"--pid-file={self.path('run', 'mysqld.pid')}", f"--tmpdir={self.path('tmp')}",
                    "--skip-name-resolve", "--innodb-buffer-pool-size=128M", "--innodb-log-file-size=64M",
                    "--max-connections=100", "--skip-log-bin"])
        self.wait_port()
        deadline = time.time() + self.start_timeout
        while True:
            try:
                run(self.mariadb() + ["-e", "CREATE DATABASE IF NOT EXISTS sbtest"], timeout=10, what="mariadb")
                break
            except ServerError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        run(self.sysbench(1) + ["prepare"], timeout=120, what="sysbench prepare")

    def mariadb(self):
        return ["mariadb", "--no-defaults", f"--socket={self.sock}", "-uroot"]

    def sysbench(self, threads, seconds=10):
        return ["sysbench", "oltp_read_write", "--db-driver=mysql", f"--mysql-socket={self.sock}",
                "--mysql-user=root", "--mysql-db=sbtest", f"--tables={TABLES}", f"--table-size={TABLE_SIZE}",
                f"--threads={threads}", f"--time={int(seconds)}", "--report-interval=0"]

    def load(self, seconds):
        p = self.spawn_load(self.sysbench(THREADS, seconds) + ["run"])
        # Connected when the server runs a thread for each client.
        deadline = time.time() + 20
        while True:
            self.check_load_alive(p)
            try:
                n = int(run(self.mariadb() + ["-N", "-e", "SHOW STATUS LIKE 'Threads_connected'"],
                            timeout=10).split()[-1])
            except (ServerError, ValueError, IndexError):
                n = 0
            if n > THREADS:
                return p
            if time.time() > deadline:
                raise ServerError(f"mariadb: sysbench's {THREADS} threads did not connect within 20 s")
            time.sleep(0.1)

    throughput_unit = "transactions/s (sysbench)"

    def throughput(self, output):
        """sysbench's `transactions: N (R per sec.)`."""
        return report_value("mariadb", r"^\s*transactions:\s+\d+\s+\(([0-9.]+) per sec\.\)", output)


if __name__ == "__main__":
    from common import main
    main(MariaDB)
