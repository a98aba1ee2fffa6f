"""Shared pieces of the integration tests: paths, the tiny test registry,
checks, and helpers to run parktrace and read its JSON reports.

main() ends with a DONE line, "R of N ran: P passed, F failed, S skipped,
G known gaps", that tests/run.sh holds against the N tests registered. Every run uses its
own unwind cache in TMP, removed at exit (kept with PT_KEEP_TMP=1)."""
import atexit
import json
import os
import re
import shutil
import signal
import socket
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

# Issue 39's hostile side: a local user without privileges. Every test that
# runs a trap, a workload or a client as that user prefixes AS_NOBODY.
NOBODY = 65534
AS_NOBODY = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]


def nobody_dir(prefix="pt-nobody-"):
    """A fresh directory of nobody's in /tmp (TMP is root's, mode 0700, so
    nobody could neither reach nor write there), removed at exit."""
    d = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    os.chmod(d, 0o755)
    os.chown(d, NOBODY, NOBODY)
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    return d
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


class KnownGap(Exception):
    pass


LEDGER_PATH = os.path.join(ROOT, "tests", "known_gaps")


def read_ledger(path=LEDGER_PATH):
    """{name: {"file", "tests", "where", "covers", "cap", "unit", "closes"}}
    from the ledger: blocks of "key: value" lines, one per gap, apart by
    blank lines (tests/README.md, "Known gaps"). "test" is FILE TEST...,
    and may go on with another FILE TEST...: "where" holds every (file,
    test); "file" and "tests" the first file's."""
    gaps, cur = {}, {}
    for line in open(path).read().splitlines() + [""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                where, file = [], None
                for word in cur["test"].split():
                    if word.endswith(".py"):
                        file = word
                    else:
                        where.append((file, word))
                first = where[0][0] if where else None
                cap, _, unit = cur["cap"].partition(" ")
                gaps[cur["gap"]] = {"file": first, "tests": [t for f, t in where if f == first], "where": where,
                                    "covers": cur["covers"], "cap": float(cap), "unit": unit,
                                    "closes": cur["closes"]}
            cur = {}
            continue
        key, _, value = line.partition(":")
        if key.startswith(" ") and cur:     # a value's next line
            cur[last] += " " + line.strip()
            continue
        last = key.strip()
        cur[last] = value.strip()
    return gaps


LEDGER = read_ledger()
_running = []   # the test now running


def known_gap(name, reason, amount):
    """Ends the running test as a known gap: parktrace does not do what the
    spec says, in the one way ledger entry NAME covers (tests/known_gaps).
    AMOUNT is how far it missed, in the entry's unit: past the entry's cap,
    or from a test the entry does not name, or with no entry at all, the
    test fails instead. run.sh counts gaps apart from passes and skips."""
    g = LEDGER.get(name)
    check(g is not None, f"known gap {name} is not in tests/known_gaps: {reason}")
    here = (os.path.basename(sys.argv[0]), _running[-1] if _running else None)
    check(here in g["where"], f"known gap {name} is {' '.join(f + ' ' + t for f, t in g['where'])}'s, "
                              f"not {here[0]} {here[1]}'s")
    check(amount <= g["cap"], f"known gap {name} past its cap: {amount:g} {g['unit']} > {g['cap']:g}: {reason}")
    print(f"KNOWN-GAP {name}: {amount:g} {g['unit']} (cap {g['cap']:g}): {reason}", flush=True)
    raise KnownGap(name)


def test(fn):
    def run():
        _running.append(fn.__name__)
        try:
            fn()
            results.append((fn.__name__, None))
            print(f"PASS {fn.__name__}", flush=True)
            # The ledger shrinks as gaps close: say when one did not occur.
            here = os.path.basename(sys.argv[0])
            for name, g in LEDGER.items():
                if (here, fn.__name__) in g["where"]:
                    print(f"INFO known gap {name} did not occur in this run (closed when: {g['closes']})",
                          flush=True)
        except KnownGap as e:
            results.append((fn.__name__, e))
            print(f"GAP {fn.__name__}: {e}", flush=True)
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


def self_stats(stderr):
    """--self-stats' counters in parktrace's STDERR, as strings by name."""
    return dict(re.findall(r"(\w+)=(\d+(?:\.\d+)?)", "\n".join(l for l in stderr.splitlines()
                                                               if l.startswith("parktrace: self"))))


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


def misread_return(stack):
    """STACK (leaf first) has the one known misreading of a Java walk left
    (tests/known_gaps, java_walk_misreads_return_above_unsafe_park):
    [unknown] right above Unsafe_Park and then a frame twice over, the
    kernel walk having read a wrong return address there and walked the
    caller again from JavaThread's anchor (seen in 2 of 22 runs under load)."""
    return any(f == "Unsafe_Park" and stack[i + 1] == "[unknown]" and i + 3 < len(stack) and
               stack[i + 2] == stack[i + 3] for i, f in enumerate(stack[:-1]))


def stolen_s():
    """Seconds the hypervisor has taken from this machine's CPUs (steal):
    time a workload that reads its own clock sees pass, and no tracer can
    see it wait."""
    with open("/proc/stat") as f:
        return int(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK")


def free_port():
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(cond, what, timeout=20):
    """Waits until COND() holds: synchronisation on a condition, not a sleep."""
    deadline = time.time() + timeout
    while not cond():
        check(time.time() < deadline, f"timed out waiting for {what}")
        time.sleep(0.05)


def child_of(pid, timeout=10):
    """The first child of PID, once it has one."""
    path = f"/proc/{pid}/task/{pid}/children"
    found = []
    wait_for(lambda: (found.extend(open(path).read().split()) or found), f"a child of {pid}", timeout)
    return int(found[0])


def kill_descendants(pid):
    """SIGKILLs every process below PID (not PID itself): ends a traced
    COMMAND once a test has what it needs, rather than sleeping out its
    tail; parktrace then ends as when COMMAND exits."""
    found, todo = [], [pid]
    while todo and len(found) < 1000:
        p = todo.pop()
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                kids = [int(k) for k in open(f"/proc/{p}/task/{t}/children").read().split()]
                found += kids
                todo += kids
        except OSError:
            continue        # gone meanwhile
    for k in found:
        try:
            os.kill(k, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_threads(pid, n, timeout=20):
    """Waits until process PID runs N threads (its workers have started)."""
    def count():
        try:
            return len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            raise AssertionError(f"process {pid} exited before starting {n} threads")
    wait_for(lambda: count() >= n, f"{n} threads in process {pid}", timeout)


def futex_sleepers(pid):
    """The threads of PID other than its leader asleep in a futex call now
    (x86-64's futex is system call 202): its workers that wait."""
    found = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            if int(tid) == pid:
                continue
            try:
                with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                    call = f.read().split()
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if call and call[0] == "202" and state == "S":
                found.append(int(tid))
    except OSError:
        pass
    return found


def wait_futex_sleepers(pid, n=1, timeout=20):
    """Waits until N of PID's workers sleep in a futex wait: its waits have
    begun, not only its threads."""
    wait_for(lambda: len(futex_sleepers(pid)) >= n, f"{n} threads of {pid} asleep in a futex wait", timeout)


def wait_mapped(pid, name, timeout=20):
    """Waits until process PID has a file whose path ends in NAME mapped."""
    def mapped():
        try:
            return any(l.rstrip().endswith(name) for l in open(f"/proc/{pid}/maps"))
        except OSError:
            raise AssertionError(f"process {pid} exited before mapping {name}")
    wait_for(mapped, f"{name} in process {pid}", timeout)


def line_starting(p, prefix, timeout):
    """The first line of P's output (text) starting with PREFIX, read within
    TIMEOUT seconds; None when none came, or P's output ended."""
    import select
    deadline = time.time() + timeout
    while True:
        left = deadline - time.time()
        if left <= 0 or not select.select([p.stdout], [], [], left)[0]:
            return None
        line = p.stdout.readline()
        if not line:
            return None
        if line.startswith(prefix):
            return line


def start_pt_ready(args, timeout=30):
    """Starts parktrace with ARGS (which must not choose -i or -f) and
    returns it once it is tracing: with -i 100ms -f json its first report
    comes after its probes are attached and its start-up scan of the
    machine is done. Returns (process, the lines read so far); finish with
    finish_pt."""
    p = subprocess.Popen(pt_cmd(["-i", "100ms", "-f", "json", *args]), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = line_starting(p, '{"type":', timeout)
    if not line:
        p.kill()
        _, err = p.communicate()
        raise AssertionError(f"parktrace gave no first report (exit {p.returncode}): {err.strip()[-300:]}")
    first = [line]
    # Read on while the test runs: a full pipe stalled parktrace in its
    # write, system-wide with every row 10 times a second, and a JVM it
    # had not named yet exited unnamed (its parks <unknown class>).
    import threading
    p.drain = threading.Thread(target=lambda: first.extend(p.stdout), daemon=True)
    p.drain.start()
    return p, first


def finish_pt(started, timeout=60, stop=False):
    """Waits for a parktrace from start_pt_ready to end; (reports, stderr).
    With STOP, once what the test ran is over: three more reports (its
    last waits named and counted), then Ctrl-C, rather than waiting out
    its -d."""
    p, lines = started
    if stop:
        seen = len(lines)
        wait_for(lambda: len(lines) >= seen + 3 or p.poll() is not None, "three more reports", 10)
        p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise
    p.drain.join(timeout=10)
    err = p.stderr.read()
    return json_reports("".join(lines)), err


def json_reports(text):
    """parktrace's reports, each held to invariants(); other lines (a
    workload's own output) are skipped."""
    return [invariants(json.loads(line)) for line in text.splitlines() if line.startswith('{"type":')]


def _numbers(v, path=""):
    """Every number in V, with where it is."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return
    if isinstance(v, (int, float)):
        yield path, v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from _numbers(x, f"{path}.{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _numbers(x, f"{path}[{i}]")


def invariants(r):
    """Holds report R to what no report may break (docs/metrics.md,
    "Invariants"), whatever the workload: no negative, NaN or infinite
    figure; a CSP or a utilisation of real time outside 0..1; a peak below
    the waiters left at the end; rows that do not add up, with the rest,
    to the totals; a process that waited longer than its threads lived.
    Returns R; a breach fails the test that read it."""
    import math
    what = f"{r.get('type')} report"
    for path, x in _numbers(r):
        check(math.isfinite(x) and x >= 0, f"{what}: {path} is {x}")
    w = r["window_ns"]
    rows = r["blockers"]
    for b in rows:
        row = f"{what}: {b['kind']} {b['class']} {b['id']} (pid {b['pid']})"
        check(b["csp"] is None or b["csp"] <= 1.0 + 1e-9, f"{row}: csp {b['csp']}")
        check(b["real_util"] <= 1.0 + 1e-9 and b["real_time_ns"] <= w, f"{row}: real time {b['real_time_ns']} "
              f"in a window of {w}")
        check(b["parked_now"] <= b["peak_parked"], f"{row}: {b['parked_now']} parked now, peak {b['peak_parked']}")
        # A wait dropped (counted) leaves its real time and takes its thread
        # time.
        check(b["real_time_ns"] <= b["thread_time_ns"] or r["totals"]["dropped_events"],
              f"{row}: real time {b['real_time_ns']} over thread time {b['thread_time_ns']} ({b['parks']} parks, "
              f"{b['parked_now']} parked at the end, peak {b['peak_parked']}, longest {b['max_park_ns']}, "
              f"{b['objects']} objects)")
        check(b["objects"] >= 1, f"{row}: {b['objects']} objects")
        # Every row knows where its process lives (issue 41): a cgroup path
        # (null only when unknown), and a container id or null.
        check("cgroup" in b and "container" in b and (b["cgroup"] is None or b["cgroup"].startswith("/")),
              f"{row}: cgroup {b.get('cgroup', 'missing')!r}, container {b.get('container', 'missing')!r}")
        if r["type"] != "interval":
            check(b["wakeups"] + b["timeouts"] <= b["parks"], f"{row}: {b['wakeups']} wakeups and "
                  f"{b['timeouts']} timeouts of {b['parks']} parks")
    for ph in r["phases"]:
        check(ph["mean_csp"] <= ph["peak_csp"] + 1e-9 <= 1.0 + 2e-9, f"{what}: phase {ph}")
    t = r["totals"]
    rest = t["rest"]
    for key, total in (("parks", "waits"), ("thread_time_ns", "thread_time_ns"), ("objects", "blockers")):
        shown = sum(b[key] for b in rows)
        check(shown + rest[key] == t[total], f"{what}: the rows' {key} ({shown}) and the rest's ({rest[key]}) "
              f"do not add up to the total {total} ({t[total]})")
    check(rest["rows"] == 0 or rest["objects"] >= rest["rows"], f"{what}: rest {rest}")
    waited = 0
    for p in r["processes"]:
        proc = f"{what}: process {p['pid']} ({p['comm']})"
        check("cgroup" in p and "container" in p, f"{proc}: no cgroup or container field")
        check(p["working_ns"] + p["idle_ns"] == p["lived_ns"], f"{proc}: working {p['working_ns']} + idle "
              f"{p['idle_ns']} is not its threads' life {p['lived_ns']}")
        # The wait times and the lives are read at one instant but not
        # atomically, and a process first watched in the window has its
        # threads' life before that read from /proc (to the clock tick):
        # 1% and 5 ms of slack (seen: 0.6% over, a JVM found 1 s into its
        # life), far below a waiter left parked (17-94% over in issue 37).
        if p["thread_time_ns"] > p["lived_ns"] * 1.01 + 5e6:
            # Its rows say which waits: the heaviest ten.
            mine = sorted((b for b in rows if b["pid"] == p["pid"]), key=lambda b: -b["thread_time_ns"])[:10]
            check(False, f"{proc}: waited {p['thread_time_ns']} ns, longer than its threads lived "
                  f"({p['lived_ns']} ns) in a window of {w} ns; its rows (kind, class, top frame, parks, "
                  f"thread ns, parked now, longest ns): " + "; ".join(
                      f"{b['kind']} {b['class']} {b['top_frame']} {b['parks']} {b['thread_time_ns']} "
                      f"{b['parked_now']} {b['max_park_ns']}" for b in mine))
        waited += p["thread_time_ns"]
    check(waited <= t["thread_time_ns"], f"{what}: its processes waited {waited} ns, its totals say "
          f"{t['thread_time_ns']}")
    return r


def check_lived(report, pid, threads, slack=0.02):
    """Process PID, known to the workload to run at most THREADS threads
    through REPORT's window, lived no longer than that: a check of
    lived_ns against the workload, not against parktrace."""
    procs = [p for p in report["processes"] if p["pid"] == pid]
    check(procs, f"no process entry for pid {pid}")
    limit = threads * report["window_ns"] * (1 + slack)
    check(procs[0]["lived_ns"] <= limit, f"pid {pid}: threads lived {procs[0]['lived_ns']} ns, more than "
          f"{threads} threads x {report['window_ns']} ns")
    check(procs[0]["thread_time_ns"] <= limit, f"pid {pid}: waited {procs[0]['thread_time_ns']} ns, more than "
          f"{threads} threads x {report['window_ns']} ns")


def final_of(reports):
    finals = [r for r in reports if r["type"] == "final"]
    check(len(finals) == 1, f"expected one final report, got {len(finals)}")
    return finals[0]


def main():
    if sys.argv[1:] == ["--list"]:      # the registered tests, for tests/expected_tests
        for t in TESTS:
            print(t.__name__)
        return
    only = sys.argv[1:]
    chosen = [t for t in TESTS if not only or t.__name__ in only]
    for t in chosen:
        t0 = time.monotonic()
        t()
        # Where the suite's time goes (tests/run.sh sums the files').
        print(f"TIME {t.__name__} {time.monotonic() - t0:.1f} s", flush=True)
    skipped = sum(1 for _, e in results if isinstance(e, SkipTest))
    gaps = sum(1 for _, e in results if isinstance(e, KnownGap))
    failed = sum(1 for _, e in results if e) - skipped - gaps
    ran = len(results)
    name = os.path.basename(sys.argv[0])
    print(f"DONE {name}: {ran} of {len(chosen)} ran: {ran - failed - skipped - gaps} passed, {failed} failed, "
          f"{skipped} skipped, {gaps} known gaps", flush=True)
    sys.exit(1 if failed or ran != len(chosen) else 0)
