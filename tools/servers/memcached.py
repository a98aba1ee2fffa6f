"""memcached under memcaslap (libmemcached-tools; Debian ships it as
`memcaslap`, next to the older `memcslap` that has no time limit).

memcached on 127.0.0.1 on a port of its own, TCP only (-U 0), 4 worker
threads and 64 MB, as user memcache (-u: it refuses root without it).
memcaslap runs 2 threads with 32 concurrent connections of gets and sets
(its default mix: 9 gets to 1 set) for the load's time."""
import time

from common import Server, ServerError, report_value

THREADS = 4


class Memcached(Server):
    name = "memcached"

    def start(self):
        self.spawn(["memcached", "-u", "memcache", "-l", "127.0.0.1", "-p", str(self.port), "-U", "0",
                    "-t", str(THREADS), "-m", "64", "-c", "1024"])
        self.wait_port()

    def load(self, seconds):
        p = self.spawn_load(["memcaslap", "-s", f"127.0.0.1:{self.port}", "-T", "2", "-c", "32",
                             "-t", f"{int(seconds)}s", "-X", "64"])
        # Its connections are up once the server counts them.
        import socket
        deadline = time.time() + 20
        while True:
            self.check_load_alive(p)
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                    s.sendall(b"stats\r\nquit\r\n")
                    stats = b""
                    while not stats.endswith(b"END\r\n"):
                        chunk = s.recv(65536)
                        if not chunk:
                            break
                        stats += chunk
                n = int(next(l.split()[2] for l in stats.decode().splitlines() if " curr_connections " in l))
            except (OSError, StopIteration, ValueError, IndexError):
                n = 0
            if n > 32:
                return p
            if time.time() > deadline:
                raise ServerError("memcached: memcaslap's 32 connections did not come up within 20 s")
            time.sleep(0.1)

    throughput_unit = "gets and sets/s (memcaslap TPS)"

    def throughput(self, output):
        """memcaslap's final `Run time: Ts Ops: N TPS: R ...`."""
        return report_value("memcached", r"^Run time: \S+ Ops: \d+ TPS: ([0-9.]+)", output)


if __name__ == "__main__":
    from common import main
    main(Memcached)
