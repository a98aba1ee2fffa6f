"""Shared pieces of the integration tests: paths, the tiny test registry,
checks, and helpers to run parktrace and read its JSON reports.

main() ends with a DONE line, "R of N ran: P passed, F failed, S skipped",
that tests/run.sh holds against the N tests registered. Every run uses its
own unwind cache in TMP, removed at exit (kept with PT_KEEP_TMP=1)."""
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The build to test: `build` unless PT_BUILD names another (a second checkout's build dir).
BUILD = os.path.join(ROOT, os.environ.get("PT_BUILD", "build"))
PT = os.path.join(BUILD, "parktrace")
MC = os.path.join(BUILD, "workloads", "mutex_contention")
SHM = os.path.join(BUILD, "workloads", "shared_mutex")
TW = os.path.join(BUILD, "workloads", "timed_waits")
FLAMEGRAPH = "/usr/share/perl5/Devel/NYTProf/flamegraph.pl"
JAVA_CP = os.path.join(BUILD, "java")
TMP = tempfile.mkdtemp(prefix="pt-itest-")
UNWIND_CACHE = os.path.join(TMP, "unwind-cache")


def _remove_tmp(owner=os.getpid()):
    if os.getpid() != owner:   # a forked child exiting: TMP is still its parent's
        return
    if os.environ.get("PT_KEEP_TMP") == "1":
        print(f"INFO kept {TMP} (PT_KEEP_TMP=1)", flush=True)
    else:
        shutil.rmtree(TMP, ignore_errors=True)


atexit.register(_remove_tmp)
# timeout(1) ends a file with SIGTERM: exit through atexit (and the tests'
# finally blocks) rather than die with TMP left behind.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))

results = []   # (name, None) passed, (name, SkipTest) skipped, (name, exception) failed


class SkipTest(Exception):
    pass


def skip(reason):
    """Ends the running test as skipped, not failed: only for a test that
    needs what this machine may lack (say which package gives it)."""
    raise SkipTest(reason)


def known_gap(name, reason):
    """Ends the running test as a known gap: parktrace does not do what the
    spec says, and the test states it rather than pass. Counted as skipped
    (neither passed nor failed) until the runner counts these lines."""
    print(f"KNOWN-GAP {name}: {reason}", flush=True)
    skip(f"known gap {name}")


def test(fn):
    def run():
        try:
            fn()
            results.append((fn.__name__, None))
            print(f"PASS {fn.__name__}", flush=True)
        except SkipTest as e:
            results.append((fn.__name__, e))
            print(f"SKIP {fn.__name__}: {e}", flush=True)
        except Exception as e:  # a failing check or a crash: both fail the test
            results.append((fn.__name__, e))
            print(f"FAIL {fn.__name__}: {e}", flush=True)
    run.__name__ = fn.__name__
    TESTS.append(run)
    return fn


TESTS = []


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def within(got, want, rel, what, ref="workload"):
    check(want > 0, f"{what}: the {ref} measured nothing")
    err = abs(got - want) / want
    check(err <= rel, f"{what}: parktrace {got} vs {ref} {want} ({err:.1%} > {rel:.0%})")


def pt_cmd(args):
    """parktrace's command line for ARGS, with this run's own unwind cache
    unless ARGS choose one: tests never touch /var/cache/parktrace."""
    own = args[:args.index("--")] if "--" in args else args
    if any(a == "--unwind-cache" or a.startswith("--unwind-cache=") for a in own):
        return [PT] + list(args)
    return [PT, "--unwind-cache", UNWIND_CACHE] + list(args)


def run_pt(args, timeout=60, **kw):
    return subprocess.run(pt_cmd(args), capture_output=True, text=True, timeout=timeout, **kw)


def run_on_terminal(argv, timeout=30):
    """Runs ARGV with a pseudo-terminal as its stdout (parktrace's live
    view); everything it wrote there, as bytes. ARGV starting with PT gets
    pt_cmd's unwind cache."""
    import pty
    if argv and argv[0] == PT:
        argv = pt_cmd(argv[1:])
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:      # EIO: the terminal's last writer has gone
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=timeout)
    os.close(master)
    return b"".join(chunks)


def wait_for(cond, what, timeout=20):
    """Waits until COND() holds: synchronisation on a condition, not a sleep."""
    deadline = time.time() + timeout
    while not cond():
        check(time.time() < deadline, f"timed out waiting for {what}")
        time.sleep(0.05)


def wait_threads(pid, n, timeout=20):
    """Waits until process PID runs N threads (its workers have started)."""
    def count():
        try:
            return len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            raise AssertionError(f"process {pid} exited before starting {n} threads")
    wait_for(lambda: count() >= n, f"{n} threads in process {pid}", timeout)


def wait_mapped(pid, name, timeout=20):
    """Waits until process PID has a file whose path ends in NAME mapped."""
    def mapped():
        try:
            return any(l.rstrip().endswith(name) for l in open(f"/proc/{pid}/maps"))
        except OSError:
            raise AssertionError(f"process {pid} exited before mapping {name}")
    wait_for(mapped, f"{name} in process {pid}", timeout)


def start_pt_ready(args, timeout=30):
    """Starts parktrace with ARGS (which must not choose -i or -f) and
    returns it once it is tracing: with -i 100ms -f json its first report
    comes after its probes are attached and its start-up scan of the
    machine is done. Returns (process, the lines read so far); finish with
    finish_pt."""
    import select
    p = subprocess.Popen(pt_cmd(["-i", "100ms", "-f", "json", *args]), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline, first = time.time() + timeout, []
    while not first:
        left = deadline - time.time()
        if left <= 0 or p.poll() is not None:
            p.kill()
            _, err = p.communicate()
            raise AssertionError(f"parktrace gave no first report (exit {p.returncode}): {err.strip()[-300:]}")
        if select.select([p.stdout], [], [], left)[0]:
            line = p.stdout.readline()
            if line.startswith('{"type":'):
                first.append(line)
    return p, first


def finish_pt(started, timeout=60):
    """Waits for a parktrace from start_pt_ready to end; (reports, stderr)."""
    p, first = started
    out, err = p.communicate(timeout=timeout)
    return json_reports("".join(first) + out), err


def json_reports(text):
    """parktrace's reports; other lines (a workload's own output) are skipped."""
    return [json.loads(line) for line in text.splitlines() if line.startswith('{"type":')]


def final_of(reports):
    finals = [r for r in reports if r["type"] == "final"]
    check(len(finals) == 1, f"expected one final report, got {len(finals)}")
    return finals[0]


def main():
    only = sys.argv[1:]
    chosen = [t for t in TESTS if not only or t.__name__ in only]
    for t in chosen:
        t()
    skipped = sum(1 for _, e in results if isinstance(e, SkipTest))
    failed = sum(1 for _, e in results if e) - skipped
    ran = len(results)
    name = os.path.basename(sys.argv[0])
    print(f"DONE {name}: {ran} of {len(chosen)} ran: {ran - failed - skipped} passed, {failed} failed, "
          f"{skipped} skipped", flush=True)
    sys.exit(1 if failed or ran != len(chosen) else 0)
