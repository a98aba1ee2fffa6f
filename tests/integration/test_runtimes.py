#!/usr/bin/env python3
"""Runtimes' own locks, joins and idle threads as metrics.md's table "Idle,
joins and runtime locks" says, on the runtimes from Debian."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

# Debian's CPython (not whatever python3 comes first in PATH): its GIL is
# named by python3-dbg's debug file (tools/install-deps.sh).
PYTHON = "/usr/bin/python3"
GIL_THREADS = os.path.join(ROOT, "tools", "workloads", "gil_threads.py")

_gil = []


def gil_run():
    """gil_threads.py, four threads spinning 3 s, traced once for both tests:
    the workload's line, the final report, and the workload's rows."""
    if not _gil:
        # The premise, one thread running and the rest waiting for the GIL,
        # set up: real-time priority above any load the machine has (make
        # test-loaded keeps a core busy). Without it a holder preempted by
        # the load is runnable, not waiting, yet its wall time less CPU time
        # counts it: 12.7% more than the GIL's waits under load.
        p = run_pt(["-f", "json", "--", "chrt", "-f", "1", PYTHON, GIL_THREADS, "3", "4"], timeout=60)
        check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-300:]}")
        wl = json.loads([l for l in p.stdout.splitlines() if l.startswith('{"pid"')][-1])
        final = final_of(json_reports(p.stdout))
        _gil.append((wl, final, [b for b in final["blockers"] if b["pid"] == wl["pid"]]))
    return _gil[0]


@test
def cpython_gil_is_contention():
    # Four CPU-bound threads for 3 s: one holds the GIL at a time, the
    # others wait for it (about 9 s of thread time). Before 2026-11-28 the
    # GIL's condition variable was a wait-role row whose waits mostly
    # timed out (its switch interval), so idle and ranked last, and the
    # main thread's join led the report.
    wl, final, rows = gil_run()
    gil = [b for b in rows if b["class"] == "python-gil"]
    check(gil, f"no python-gil row: {[(b['class'], b['top_frame']) for b in rows]}")
    check(all(b["role"] == "lock" and not b["idle"] for b in gil),
          f"the GIL is not contention: {[(b['role'], b['idle']) for b in gil]}")
    check(rows[0]["class"] == "python-gil", f"row 1 is {rows[0]['class']} at {rows[0]['top_frame']}, not the GIL")
    check(rows[0]["csp"] is not None and rows[0]["csp"] > 0.3, f"the GIL's CSP is {rows[0]['csp']}")
    # Against the threads' own clocks: wall time less CPU time, which with
    # one runner at a time is their wait for the GIL.
    within(sum(b["thread_time_ns"] for b in gil), wl["gil_wait_ns"], 0.10, "the GIL's thread time")
    check_lived(final, wl["pid"], wl["threads"] + 1)


def releases_a_thread_end(b):
    waker = (b.get("top_waker") or {}).get("stack") or []
    return any(f.startswith("release_sentinel") for f in waker)


@test
def cpython_join_ranks_with_idle_housekeeping():
    # The main thread joins four threads that spin 3 s. Thread.join takes
    # each thread's state lock, a semaphore like any Lock; the thread's end
    # releases it (release_sentinel). Before 2026-11-28 the first join was a
    # lock-role `sem` row of about 3 s with a CSP, above the GIL.
    wl, final, rows = gil_run()
    joins = [b for b in rows if b["class"] == "sem" and releases_a_thread_end(b)]
    check(joins, f"no join row: {[(b['class'], b['top_frame'], b.get('top_waker')) for b in rows]}")
    check(all(b["role"] == "wait" and b["idle"] and b["csp"] is None for b in joins),
          f"joins are not idle waits: {[(b['role'], b['idle'], b['csp']) for b in joins]}")
    # Ranked after every contention row.
    first_idle = min(i for i, b in enumerate(rows) if b["idle"])
    check(all(b["idle"] for b in rows[first_idle:]), "a contention row ranks below idle housekeeping")
    check(rows[0]["class"] == "python-gil", f"row 1 is {rows[0]['class']} at {rows[0]['top_frame']}")
    # Against the main thread's clock around join(): its time there is the
    # joins' waits plus taking the GIL back after each (a few switch
    # intervals of 5 ms), which the GIL's rows count.
    joined = sum(b["thread_time_ns"] for b in joins)
    check(0.85 * wl["join_ns"] <= joined <= 1.01 * wl["join_ns"],
          f"the joins' thread time {joined / 1e9:.3f} s, the main thread spent {wl['join_ns'] / 1e9:.3f} s in join()")


GO_MUTEX = os.path.join(BUILD, "go", "go_mutex")
GO_IDLE = ("runtime.notesleep", "runtime.notetsleep", "runtime.notetsleepg", "runtime.mPark", "runtime.stopm")


@test
def go_scheduler_idle_threads_rank_with_idle_housekeeping():
    # Eight goroutines on one sync.Mutex (Debian's Go). Between goroutines
    # the runtime's threads sleep on their notes (stopm, notesleep): before
    # 2026-12-01 those futex rows, seconds of them, were the whole report.
    p = run_pt(["-f", "json", "--top", "0", "--", GO_MUTEX, "-s", "3"], timeout=60)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-300:]}")
    wl = json.loads([l for l in p.stdout.splitlines() if l.startswith('{"goroutines"')][-1])
    final = final_of(json_reports(p.stdout))
    rows = [b for b in final["blockers"] if b["comm"].startswith("go_mutex")]
    check(wl["locks"] > 1000, f"the workload took its lock only {wl['locks']} times")

    def scheduler_idle(b):
        return any(f.split("(")[0] in GO_IDLE for f in b["first_stack"] or [])
    idle = [b for b in rows if scheduler_idle(b)]
    check(idle and sum(b["parks"] for b in idle) > 100,
          f"no scheduler sleeps among {[(b['top_frame'], b['parks']) for b in rows]}")
    check(all(b["idle"] for b in idle),
          f"scheduler sleeps not idle: {[(b['top_frame'], b['first_stack'][:5]) for b in idle if not b['idle']]}")
    # The runtime's own mutex (lock2: a semaphore's or channel's lock) is contention.
    lock2 = [b for b in rows if "runtime.lock2" in (b["first_stack"] or [])[:4] and not scheduler_idle(b)]
    check(not any(b["idle"] for b in lock2), "a runtime.lock2 wait was called idle")
    first_idle = min(i for i, b in enumerate(rows) if b["idle"])
    check(all(b["idle"] for b in rows[first_idle:]), "a contention row ranks below idle housekeeping")


if __name__ == "__main__":
    main()
