#!/usr/bin/python3
"""Critical section pressure and phases (Free Lunch) under real BPF, on
workloads whose CSP is known by construction."""
import datetime
import json
import os

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

PINGPONG = os.path.join(BUILD, "workloads", "lock_pingpong")


def traced(cmd, pt_args=()):
    p = run_pt(["-f", "json", "--top", "0", *pt_args, "--", *cmd], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()}")
    own = [l for l in p.stdout.splitlines() if l.startswith("{") and not l.startswith('{"type":')]
    return (json.loads(own[-1]) if own else None), json_reports(p.stdout)


def java(*args):
    return ["java", "-Xmx128m", "-cp", JAVA_CP, *args]


@test
def ping_pong_csp_is_one_half():
    # Two threads take turns holding one lock: one always holds, one always waits.
    # The reference value holds in the steady state; the whole run also counts
    # the JVM's start-up as working time, which can only lower it.
    cases = [("pthread mutex", [PINGPONG, "-s", "4"], "futex", "pthread_mutex"),
             ("ReentrantLock", java("LockPingPong", "juc", "4"), "jvm-park",
              "java.util.concurrent.locks.ReentrantLock$FairSync"),
             ("synchronized", java("LockPingPong", "sync", "4"), "jvm-monitor", "LockPingPong$Token")]
    for what, cmd, kind, cls in cases:
        _, reports = traced(cmd, ("--interval", "1s"))

        def csp_of(report):
            rows = [b for b in report["blockers"] if b["kind"] == kind and b["class"] == cls]
            check(len(rows) == 1, f"{what}: expected one {cls} row, got {len(rows)}")
            return rows[0]["csp"]
        # The first and last windows are partial (start-up, exit): left out
        # before they are looked at; the last may hold no waits at all.
        steady = [csp_of(r) for r in [r for r in reports if r["type"] == "interval"][1:-1]]
        check(len(steady) >= 2 and None not in steady, f"{what}: steady intervals {steady}")
        mid = sorted(steady)[len(steady) // 2]
        check(abs(mid - 0.5) <= 0.05, f"{what}: steady CSP {steady}, want 0.50 +- 0.05")
        whole = csp_of(final_of(reports))
        check(whole is not None and 0.40 <= whole <= 0.55, f"{what}: whole-run CSP {whole}")


@test
def one_thread_alone_makes_no_rows():
    wl, reports = traced([PINGPONG, "-s", "1", "-t", "1"])
    final = final_of(reports)
    check(wl["rounds"] > 100, f"the thread took the lock only {wl['rounds']} times")
    rows = [b for b in final["blockers"] if b["class"] == "pthread_mutex"]
    check(not rows, f"an uncontended lock has rows: {rows}")


@test
def fork_join_csp_rises_as_parallel_work_shrinks():
    # Free Lunch's Fig. 3: a master and 4 workers, one monitor, wait/notifyAll;
    # each worker merges its result under the monitor (a fixed 200 us).
    csps = []
    for work_us in ("4000", "1000", "250"):
        _, reports = traced(java("ForkJoinCycle", "3", work_us))
        final = final_of(reports)
        rows = [b for b in final["blockers"] if b["kind"] == "jvm-monitor" and b["class"] == "ForkJoinCycle$Board"]
        check(len(rows) == 1 and rows[0]["csp"] is not None, f"work {work_us} us: no monitor row with a CSP: {rows}")
        csps.append(rows[0]["csp"])
    check(csps[0] < csps[1] < csps[2], f"CSP does not rise as work per cycle shrinks: {csps}")


def wall(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


@test
def contended_stretch_is_exactly_one_phase():
    wl, reports = traced(java("PhasedLock", "3"), ("--interval", "1s"))
    final = final_of(reports)
    lock = "java.util.concurrent.locks.ReentrantLock$NonfairSync"
    phases = [p for p in final["phases"] if p["class"] == lock]
    check(len(phases) == 1, f"expected one phase for the lock, got {phases}")
    p = phases[0]
    check(p["end"] is not None, "the phase never ended")
    start, end = wall(p["start"]), wall(p["end"])
    true_from, true_to = wl["contended_from"] / 1000, wl["contended_to"] / 1000
    check(abs(start - true_from) <= 1.05, f"phase starts {start - true_from:+.2f} s from the switch")
    check(abs(end - true_to) <= 1.05, f"phase ends {end - true_to:+.2f} s from the switch")
    check(p["peak_csp"] >= p["mean_csp"] >= 0.05, f"peak {p['peak_csp']} mean {p['mean_csp']}")
    intervals = [r for r in reports if r["type"] == "interval"]
    check(len(intervals) >= 8, f"only {len(intervals)} interval reports")


if __name__ == "__main__":
    main()
