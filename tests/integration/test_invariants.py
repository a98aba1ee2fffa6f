#!/usr/bin/env python3
"""Options that choose what is shown, and the stack budget, never change
what was counted (docs/metrics.md, "Invariants"): parktrace instances with
different options tracing one run agree, and agree with the workload.
Every report read here also passes harness.invariants."""
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

TX = "ShortLivedWaits$Tx"
LOCK = "java.util.concurrent.locks.ReentrantLock$NonfairSync"


def class_totals(report, pid):
    """(kind, class) -> [parks, thread_time_ns] over REPORT's rows of PID."""
    out = {}
    for b in report["blockers"]:
        if b["pid"] == pid:
            t = out.setdefault((b["kind"], b["class"]), [0, 0])
            t[0] += b["parks"]
            t[1] += b["thread_time_ns"]
    return out


def watch_threads(pid, stop, seen):
    """The most threads process PID ran, sampled until STOP is set."""
    while not stop.wait(0.05):
        try:
            seen[0] = max(seen[0], len(os.listdir(f"/proc/{pid}/task")))
        except OSError:
            return


def start_to_file(args, out):
    """parktrace with ARGS, its reports every 100 ms to file OUT: a pipe
    nobody reads while the workload runs would stall it."""
    return subprocess.Popen(pt_cmd(["-i", "100ms", "-f", "json", "-o", out, *args]), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def file_reports(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return []
    # Whole lines only: the one being written is left for the next look.
    return json_reports(text[:text.rfind("\n") + 1])


@test
def instances_with_other_options_count_the_same():
    # One JVM run: short-lived transaction objects waited on with
    # Object.wait(10 ms) (an embedded database's row locks), a contended
    # ReentrantLock and a pool. Three tracers are ready before its threads
    # start and stop when it exits, so each sees every wait: the default
    # (sampled stacks), every stack walked, one row per class, and the
    # default view. Before 2026-11-28 the instances differed by up to 30%
    # on the transactions: a waking that raced the wait's opening left a
    # waiter parked for good.
    wl = subprocess.Popen(["java", "-XX:+PreserveFramePointer", "-cp", JAVA_CP, "ShortLivedWaits", "5"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tracers = {}
    try:
        check(wl.stdout.readline().strip() == "ready", "the workload did not start")
        # Every row shown (--top 0): a class's rows are compared, and the
        # default view may rank a row of waits that time out as idle and
        # cut it (its time then in the totals' rest).
        # And the default view itself, whose fold of short-lived objects
        # into their sites must keep every wait in a row or in the rest
        # (harness.invariants reads every report).
        variants = {"default": ["--top", "0"], "stacks all": ["--stacks", "all", "--top", "0"],
                    "by class": ["--by", "class", "--top", "0", "--max-blockers", "1024"], "default view": []}
        for name, extra in variants.items():
            out = os.path.join(TMP, f"instances-{name.replace(' ', '-')}.json")
            tracers[name] = (start_to_file(["-p", str(wl.pid), *extra], out), out)
        # Each knows the JVM once it charges the warm-up waits to their class.
        for name, (p, out) in tracers.items():
            wait_for(lambda: any(b["class"] == "ShortLivedWaits$Warmup" for r in file_reports(out)
                                 for b in r["blockers"]) or p.poll() is not None, f"{name}: the warm-up's class", 30)
            if p.poll() is not None:
                check(False, f"{name}: parktrace exited {p.returncode}: {p.stderr.read()[-300:]}")
        stop, seen = threading.Event(), [0]
        watcher = threading.Thread(target=watch_threads, args=(wl.pid, stop, seen))
        watcher.start()
        wl.stdin.write("go\n")
        wl.stdin.flush()
        out, err = wl.communicate(timeout=60)
        stop.set()
        watcher.join()
        check(wl.returncode == 0, f"workload exited {wl.returncode}: {err[-300:]}")
        own = json.loads(out.splitlines()[-1])
        finals = {}
        for name, (p, path) in tracers.items():
            perr = p.communicate(timeout=60)[1]
            check(p.returncode == 0, f"{name}: parktrace exited {p.returncode}: {perr[-300:]}")
            finals[name] = final_of(file_reports(path))
        tracers = {}
    finally:
        for p, _ in tracers.values():
            p.kill()
        if wl.poll() is None:
            wl.kill()
    pid = own["pid"]
    # The JVM's threads at their most, through the window: its life can be
    # no longer (a check against the process, not parktrace's own figures).
    for name, final in finals.items():
        check_lived(final, pid, seen[0])
    got = {name: class_totals(final, pid) for name, final in finals.items()}
    ref = got["stacks all"]
    # The default view folded thousands of transactions into their site
    # (harness.invariants held its rows and rest to its totals).
    folded = [b for b in finals["default view"]["blockers"] if b["class"] == TX and b["objects"] > 1]
    check(folded, f"the default view folded no transactions: {finals['default view']['blockers'][:3]}")
    for kind, cls in (("jvm-wait", TX), ("jvm-park", LOCK)):
        want = ref.get((kind, cls))
        check(want and want[1] > 0, f"--stacks all: no {kind} {cls} rows: {sorted(ref)}")
        for name in ("default", "by class"):
            have = got[name].get((kind, cls), [0, 0])
            print(f"INFO {kind} {cls}: {name} {have[0]} waits {have[1] / 1e6:.1f} ms, --stacks all "
                  f"{want[0]} waits {want[1] / 1e6:.1f} ms", flush=True)
            within(have[1], want[1], 0.01, f"{name}: {kind} {cls} thread time", ref="--stacks all")
            within(have[0], want[0], 0.01, f"{name}: {kind} {cls} waits", ref="--stacks all")
    # The premise: the small table of "by class" did recycle idle
    # transactions while the run went on (their figures then kept with
    # their class's retired site, so its totals above still agree).
    recycled = finals["by class"]["totals"].get("recycled_blockers", 0)
    check(recycled > 100, f"--max-blockers 1024 recycled only {recycled} blockers")
    # Against the workload's own clocks around its waits. parktrace times
    # only the sleeps: not the spin before a park, nor a re-entry that
    # did not sleep, so a little less (docs/reading.md, "What a wait's time covers").
    tx_ns = sum(ref.get((k, TX), [0, 0])[1] for k in ("jvm-wait", "jvm-monitor"))
    print(f"INFO against the workload's clocks: transactions {tx_ns / own['tx_wait_ns']:.3f} "
          f"({own['tx_waits']} waits, {own['tx_wait_ns'] / max(own['tx_waits'], 1) / 1e3:.0f} us each), "
          f"lock {ref[('jvm-park', LOCK)][1] / own['lock_ns']:.3f} ({own['locked']} lock() calls, "
          f"{own['lock_ns'] / max(own['locked'], 1) / 1e3:.0f} us each)", flush=True)
    check(0.75 * own["tx_wait_ns"] <= tx_ns <= 1.01 * own["tx_wait_ns"],
          f"transactions: parktrace {tx_ns / 1e6:.1f} ms, the workload timed {own['tx_wait_ns'] / 1e6:.1f} ms")
    lock_ns = ref[("jvm-park", LOCK)][1]
    check(0.75 * own["lock_ns"] <= lock_ns <= 1.01 * own["lock_ns"],
          f"lock: parktrace {lock_ns / 1e6:.1f} ms, the workload timed {own['lock_ns'] / 1e6:.1f} ms")


if __name__ == "__main__":
    main()
