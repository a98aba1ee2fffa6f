"""Shared pieces of the integration tests: paths, the tiny test registry,
checks, and helpers to run parktrace and read its JSON reports."""
import json
import os
import subprocess
import sys
import tempfile

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

results = []


def test(fn):
    def run():
        try:
            fn()
            results.append((fn.__name__, None))
            print(f"PASS {fn.__name__}", flush=True)
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


def run_pt(args, timeout=60, **kw):
    return subprocess.run([PT] + args, capture_output=True, text=True, timeout=timeout, **kw)


def run_on_terminal(argv, timeout=30):
    """Runs ARGV with a pseudo-terminal as its stdout (parktrace's live
    view); everything it wrote there, as bytes."""
    import pty
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


def json_reports(text):
    """parktrace's reports; other lines (a workload's own output) are skipped."""
    return [json.loads(line) for line in text.splitlines() if line.startswith('{"type":')]


def final_of(reports):
    finals = [r for r in reports if r["type"] == "final"]
    check(len(finals) == 1, f"expected one final report, got {len(finals)}")
    return finals[0]




def main():
    only = sys.argv[1:]
    for t in TESTS:
        if not only or t.__name__ in only:
            t()
    failed = sum(1 for _, e in results if e)
    name = os.path.basename(sys.argv[0])
    print(f"{name}: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
