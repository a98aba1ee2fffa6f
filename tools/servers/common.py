"""The common part of the real-server suite: a server started by us, on
loopback, with a private directory, and stopped and cleaned up afterwards
whatever happens.

Each server module (postgres.py, mariadb.py, tomcat.py, zookeeper.py,
memcached.py) defines a subclass of Server with start(), load(seconds) and
pids(). Use it as a context manager:

    with Postgres() as s:       # start(): data dir, server, ready on its port
        load = s.load(20)       # the load client, a Popen running in the background
        ... trace s.pids() ...
        s.end_load(load)
                                # stop(): server stopped, its directory removed

Every step is bounded in time: a step that overruns raises ServerError with
what the server wrote to its log. A server left running by a crash is
stopped at exit (atexit, and SIGTERM as the test harness maps it to exit).
"""
import atexit
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JDK = "/usr/lib/jvm/java-17-openjdk-amd64/bin"
JAVA = os.path.join(JDK, "java")
JAVAC = os.path.join(JDK, "javac")
JAVA_SRC = os.path.join(HERE, "java")

_live = []   # servers started and not yet stopped, stopped at exit


class ServerError(Exception):
    pass


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now (the
    kernel's choice, so never a server's default port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def run(argv, timeout, what=None, **kw):
    """Runs ARGV to completion within TIMEOUT seconds; its stdout. A failure
    or an overrun raises ServerError with the command's output."""
    what = what or os.path.basename(argv[0])
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        raise ServerError(f"{what} took more than {timeout} s: {(e.stderr or e.stdout or '')[-400:]!s}")
    except OSError as e:
        raise ServerError(f"{what}: {e} (run tools/install-deps.sh)")
    if p.returncode:
        raise ServerError(f"{what} exited {p.returncode}: {(p.stderr or p.stdout).strip()[-600:]}")
    return p.stdout


def as_user(name):
    """preexec_fn that drops root to user NAME (servers that refuse root)."""
    pw = pwd.getpwnam(name)

    def drop():
        os.setgroups([])
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)
    return drop


def report_value(what, pattern, output):
    """The last match of PATTERN's first group in a load client's OUTPUT, as
    a float; ServerError if there is none."""
    import re
    found = re.findall(pattern, output, re.M)
    if not found:
        raise ServerError(f"{what}: no throughput in the load client's output: {output.strip()[-400:]}")
    return float(found[-1])


def children(pid):
    """PIDs of PID's child processes."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def compile_java(sources, classpath, out):
    """Compiles SOURCES (names under tools/servers/java) into OUT."""
    os.makedirs(out, exist_ok=True)
    run([JAVAC, "-nowarn", "-d", out, "-cp", classpath] + [os.path.join(JAVA_SRC, s) for s in sources],
        timeout=90, what="javac")


class Server:
    name = "server"
    start_timeout = 60     # seconds from start() to a server ready for load
    stop_timeout = 20      # seconds for a graceful stop before SIGKILL

    def __init__(self, user=None):
        self.user = user
        self.dir = tempfile.mkdtemp(prefix=f"pt-{self.name}-")
        os.chmod(self.dir, 0o711)      # an unprivileged server can reach its own subdirectory
        self.port = free_port()
        self.proc = None               # the server process we started
        self.log_path = os.path.join(self.dir, "server.log")
        self._log = None
        self.loads = []

    # -- to be defined by each server
    def start(self):
        raise NotImplementedError

    def load(self, seconds):
        """Starts the load client for about SECONDS; returns its Popen."""
        raise NotImplementedError

    def pids(self):
        """The processes to trace: the server, or for a multi-process
        server those that serve the load."""
        return [self.proc.pid]

    # What the load client's report counts, per second (the bench's unit).
    throughput_unit = "operations/s"

    def throughput(self, output):
        """The load client's own throughput figure, from OUTPUT (what
        end_load or load_output returned); ServerError if it has none."""
        raise NotImplementedError

    def graceful_signal(self):
        return signal.SIGTERM

    # -- shared
    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def owned_dir(self, *parts, user=None):
        """A directory under ours, owned by USER (the server's user by default)."""
        d = self.path(*parts)
        os.makedirs(d, exist_ok=True)
        user = user or self.user
        if user:
            pw = pwd.getpwnam(user)
            os.chown(d, pw.pw_uid, pw.pw_gid)
        return d

    def spawn(self, argv, env=None, cwd=None):
        """Starts the server process, in a session of its own (so stop()
        reaches every process it forks), its output in server.log."""
        self._log = open(self.log_path, "ab")
        _live.append(self)
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                         start_new_session=True, env=env, cwd=cwd or self.dir,
                                         preexec_fn=as_user(self.user) if self.user else None)
        except OSError as e:
            raise ServerError(f"{self.name}: cannot start {argv[0]}: {e} (run tools/install-deps.sh)")
        return self.proc

    def log_tail(self, n=800):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-n:].strip()
        except OSError:
            return ""

    def wait_port(self, port=None, timeout=None):
        """Waits until the server accepts connections on PORT (ours by default)."""
        port = port or self.port
        deadline = time.time() + (timeout or self.start_timeout)
        while not port_open(port):
            if self.proc is not None and self.proc.poll() is not None:
                raise ServerError(f"{self.name} exited {self.proc.returncode} before listening on "
                                  f"127.0.0.1:{port}: {self.log_tail()}")
            if time.time() > deadline:
                raise ServerError(f"{self.name} not listening on 127.0.0.1:{port} after "
                                  f"{timeout or self.start_timeout} s: {self.log_tail()}")
            time.sleep(0.1)

    def spawn_load(self, argv, **kw):
        """Starts a load client in the background, its output kept in a file."""
        out = open(self.path(f"load{len(self.loads)}.out"), "w+")
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True, **kw)
        p.out = out
        self.loads.append(p)
        return p

    @staticmethod
    def load_output(p):
        p.out.seek(0)
        return p.out.read()

    def end_load(self, p, timeout=15):
        """Ends load client P (SIGINT, then SIGKILL) and returns its output."""
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGINT)
                p.wait(timeout=timeout)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                _killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=5)
        return self.load_output(p)

    def wait_load_started(self, p, timeout, marker="started"):
        """Waits until load client P has written MARKER (its workers run)."""
        deadline = time.time() + timeout
        while marker not in self.load_output(p):
            self.check_load_alive(p)
            if time.time() > deadline:
                raise ServerError(f"{self.name}: the load did not start within {timeout} s: "
                                  f"{self.load_output(p)[-400:]}")
            time.sleep(0.1)

    def check_load_alive(self, p):
        if p.poll() is not None:
            raise ServerError(f"{self.name}: the load client exited {p.returncode} early: "
                              f"{self.load_output(p)[-600:]}")

    def stop(self):
        """Stops the load clients and the server (gracefully, then SIGKILL
        to its whole session) and removes the private directory."""
        for p in self.loads:
            if p.poll() is None:
                _killpg(p.pid, signal.SIGKILL)
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            p.out.close()
        self.loads = []
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.proc.send_signal(self.graceful_signal())
                    self.proc.wait(timeout=self.stop_timeout)
                except subprocess.TimeoutExpired:
                    pass
            # Whatever is left of its session (forked backends, a stuck server).
            _killpg(self.proc.pid, signal.SIGKILL)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if self._log:
            self._log.close()
            self._log = None
        if self in _live:
            _live.remove(self)
        if os.environ.get("PT_KEEP_TMP") == "1":
            print(f"INFO kept {self.dir} (PT_KEEP_TMP=1)", flush=True)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()


class WrkServer(Server):
    """An HTTP server loaded by `wrk -t2` with CONNECTIONS connections on
    self.url; its throughput is wrk's `Requests/sec`."""
    connections = 16
    throughput_unit = "requests/s (wrk)"

    def load(self, seconds):
        return self.spawn_load(["wrk", "-t2", f"-c{self.connections}", f"-d{int(seconds)}s", self.url])

    def throughput(self, output):
        """wrk's `Requests/sec: N`."""
        return report_value(self.name, r"^Requests/sec:\s+([0-9.]+)", output)


def _killpg(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_all(owner=os.getpid()):
    if os.getpid() == owner:
        for s in list(_live):
            s.stop()


atexit.register(_stop_all)


def main(cls):
    """By hand: `python3 tools/servers/NAME.py [-s SECONDS] [-w WARMUP] [-- PARKTRACE-ARGS...]`
    starts the server, loads it for SECONDS (default 30), prints the PIDs to
    trace, and, given PARKTRACE-ARGS, runs build/parktrace -p PIDS ARGS
    after WARMUP seconds (default 2) of load; then stops everything."""
    import argparse
    import sys
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("-s", "--seconds", type=float, default=30)
    ap.add_argument("-w", "--warmup", type=float, default=2)
    ap.add_argument("pt_args", nargs="*")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    t0 = time.time()
    with cls() as s:
        print(f"{cls.name}: ready on 127.0.0.1:{s.port} in {time.time() - t0:.1f} s, dir {s.dir}", flush=True)
        load = s.load(a.seconds)
        time.sleep(a.warmup)
        s.check_load_alive(load)
        pids = ",".join(map(str, s.pids()))
        print(f"{cls.name}: under load, pids {pids}", flush=True)
        try:
            if a.pt_args:
                # PARKTRACE_BIN: another build, for a bench's baseline.
                pt = os.environ.get("PARKTRACE_BIN") or os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                                     "build", "parktrace")
                subprocess.run([pt, "-p", pids] + a.pt_args, timeout=a.seconds + 120)
            else:
                load.wait(timeout=a.seconds + 60)
        except KeyboardInterrupt:
            pass
        out = s.end_load(load)
        print(f"{cls.name}: load client said: {out.strip()[-1500:]}", flush=True)
