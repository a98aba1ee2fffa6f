#!/usr/bin/python3
"""parktrace against JDK Flight Recorder on the very same run: the JVM that
parktrace traces also records every jdk.ThreadPark (threshold 0), and the
park time per blocker class must agree between the two."""
import collections
import os
import sys

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

sys.path.insert(0, os.path.join(ROOT, "tools"))
from jfr_parks import PARK_JFC, jfr_parks  # noqa: E402

JDK = "/usr/lib/jvm/java-17-openjdk-amd64/bin"

# ParkMix's blocker classes, and the park time each carries in a 3 s run
# (2 threads parked on each, give or take): each must be compared.
WORKLOAD_CLASSES = (
    "java.util.concurrent.locks.ReentrantLock$NonfairSync",
    "java.util.concurrent.locks.ReentrantLock$FairSync",
    "java.util.concurrent.Semaphore$NonfairSync",
    "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject",
    "ParkMix$Gate",
    "<no blocker>",
)
MIN_CLASS_NS = 1_000_000_000   # a workload class carries at least 1 s of park time
COMPARE_NS = 100_000_000       # any class with 100 ms in either tool is compared
TOLERANCE = 0.05


@test
def park_time_per_class_agrees_with_jfr():
    # The workload starts all its threads, lets them sleep 600 ms (three of
    # parktrace's 200 ms thread-list refreshes; a sleep is not a park) and
    # only then parks for 3 s: parks of threads parktrace has not met yet are
    # plain futex waits, which would leave JFR with time parktrace cannot
    # charge to a class. JFR's own start-up happens before main and parks
    # nothing of these classes.
    jfc = os.path.join(TMP, "threadpark.jfc")
    with open(jfc, "w") as f:
        f.write(PARK_JFC)
    rec = os.path.join(TMP, "parkmix.jfr")
    p = run_pt(["-f", "json", "--top", "0", "--kinds", "jvm-park", "--",
                os.path.join(JDK, "java"), "-Xmx128m",
                f"-XX:StartFlightRecording:filename={rec},dumponexit=true,settings={jfc}",
                "-cp", JAVA_CP, "ParkMix", "3", "600"], timeout=90)
    check(p.returncode == 0, p.stderr)
    check(os.path.exists(rec), f"JFR wrote no recording: {p.stdout[-500:]}")
    final = final_of(json_reports(p.stdout))
    pt = collections.defaultdict(lambda: [0, 0])
    for b in final["blockers"]:
        check(b["kind"] == "jvm-park", f"--kinds jvm-park reported a {b['kind']} row")
        pt[b["class"]][0] += b["parks"]
        pt[b["class"]][1] += b["thread_time_ns"]
    jfr = jfr_parks(rec)

    compared = sorted(c for c in set(pt) | set(jfr) if max(pt[c][1], jfr[c][1]) >= COMPARE_NS)
    for c in compared:
        print(f"  {c}: parktrace {pt[c][1] / 1e6:.1f} ms in {pt[c][0]} waits, "
              f"JFR {jfr[c][1] / 1e6:.1f} ms in {jfr[c][0]} parks "
              f"({(pt[c][1] - jfr[c][1]) / max(jfr[c][1], 1):+.2%})", flush=True)
    for c in WORKLOAD_CLASSES:
        check(jfr[c][1] >= MIN_CLASS_NS, f"{c}: JFR saw only {jfr[c][1] / 1e6:.0f} ms of parks")
        check(c in compared, f"{c} was not compared")
    # Per park, JFR times the whole Unsafe.park call and parktrace only the
    # sleep in it, a few µs less; and JFR also records parks that return at
    # once (the permit was there). With parks of milliseconds both are far
    # below the tolerance.
    for c in compared:
        within(pt[c][1], jfr[c][1], TOLERANCE, f"{c} park time", ref="JFR")


if __name__ == "__main__":
    main()
