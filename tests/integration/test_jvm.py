#!/usr/bin/python3
"""JVM parking under real BPF: Java workloads on Debian's JDK 17, with the
blockers' classes read from the live JVM."""
import glob
import json
import os
import re
import sys
import time

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

sys.path.insert(0, os.path.join(ROOT, "tools"))
from jfr_parks import PARK_JFC, jfr_parks  # noqa: E402


def java(*args):
    return ["--", "java", "-Xmx128m", "-cp", JAVA_CP, *args]


def run_java(*args, pt_args=(), jvm_flags=(), want_stderr=False):
    """Runs a Java workload under parktrace: its own JSON line, and the final report."""
    p = run_pt(["-f", "json", "--top", "0", *pt_args, *java(*jvm_flags, *args)], timeout=90)
    check(p.returncode == 0, p.stderr)
    own = [l for l in p.stdout.splitlines() if l.startswith("{") and not l.startswith('{"type":')]
    got = (json.loads(own[-1]) if own else None), final_of(json_reports(p.stdout))
    return (*got, p.stderr) if want_stderr else got


def jvm_rows(final, kind="jvm-park"):
    return [b for b in final["blockers"] if b["kind"] == kind]


def hold_estimate_within(b, hold, what=""):
    """avg_hold_ns (real time over waits) against the holds the workload
    timed: 3% under, and upward 3% plus two holds' worth over the waits,
    of the interval from one acquisition to the next. Real time goes on
    while the lock is handed over: the next holder is still asleep as the
    last one lets go (its wake-up took 4.2% of a 4 ms hold on a busy CI
    run), and the workload times that too. It also overshoots at the run's
    edges: at the start the third thread waits behind two holds, and one
    late wake-up can span another. The 64 ms lock has only 30-45 waits a
    run, so each such hold is +2-3.6% (measured: +2.2% at 3 s and +3.5% at
    2 s every run, once +7.2% under uprobes)."""
    done = b["parks"] - b["parked_now"]
    edge = 2 / done if done else 0
    got, want = b["avg_hold_ns"], hold["mean_hold_ns"]
    upto = max(want, hold["mean_interval_ns"])
    check(0.97 * want <= got <= (1.03 + edge) * upto,
          f"{what}{hold['preset_ms']} ms lock avg_hold_ns: parktrace {got} vs workload {want} "
          f"({got / want - 1:+.1%}; allowed -3%, and up to +{3 + 100 * edge:.1f}% over {done} waits of the "
          f"interval between acquisitions, {upto} ns, {upto / want - 1:+.1%})")


@test
def large_critical_section_locks_and_holds():
    # The thesis's Listing 5.1 pattern: ReentrantLocks held 4, 16 and 64 ms
    # (preset), each hold also timed by the workload (sleeps overshoot).
    wl, final = run_java("LargeCriticalSection", "3", "3")
    locks = [b for b in jvm_rows(final) if b["class"] == "java.util.concurrent.locks.ReentrantLock$NonfairSync"]
    check(len(locks) == 3, f"expected 3 ReentrantLock$NonfairSync rows, got {len(locks)}: "
                           f"{[(b['class'], b['parks']) for b in jvm_rows(final)]}")
    locks.sort(key=lambda b: b["avg_hold_ns"])
    for b, hold in zip(locks, sorted(wl["holds"], key=lambda h: h["preset_ms"])):
        hold_ms = hold["preset_ms"]
        hold_estimate_within(b, hold)
        check(b["role"] == "lock", f"{hold_ms} ms lock role {b['role']}")
        check(b["name"] is None and b["id"] != "0x0", f"{hold_ms} ms lock: id is the object, no symbol name")
    top = max(locks, key=lambda b: b["thread_time_ns"])
    check(top is locks[2], "the 64 ms lock must have the most thread time")


@test
def parks_with_and_without_blocker():
    wl, final = run_java("TimedParks", "3")
    rows = {b["class"]: b for b in jvm_rows(final)}
    check("TimedParks$Gate" in rows and "<no blocker>" in rows, f"rows: {sorted(rows)}")
    for cls, want, ns in (("TimedParks$Gate", wl["gate_parks"], wl["gate_ns"]),
                          ("<no blocker>", wl["free_parks"], wl["free_ns"])):
        b = rows[cls]
        check(b["role"] == "wait", f"{cls} role {b['role']}")
        # Parks in a new thread's first moments, before parktrace has read
        # the JVM's thread list, are charged as futex waits (at most one
        # refresh, 200 ms, of a 3 s run).
        check(0.85 * want <= b["parks"] <= want, f"{cls}: {b['parks']} jvm-park parks, workload parked {want}")
        done = b["parks"] - b["parked_now"]
        check(b["timeouts"] >= 0.99 * done, f"{cls}: every parkNanos ends by timeout ({b['timeouts']}/{done})")
        within(b["avg_park_ns"], ns / want, 0.10, f"{cls} avg_park_ns against the workload's own average")


@test
def a_park_is_never_also_a_futex_wait():
    for probes in ("sched", "uprobes"):
        wl, final = run_java("TimedParks", "3", pt_args=["--probes", probes])
        parks = sum(b["parks"] for b in jvm_rows(final))
        as_futex = sum(b["parks"] for b in final["blockers"]
                       if b["kind"] == "futex" and "Parker::park(bool, long)" in b["first_stack"])
        total = wl["gate_parks"] + wl["free_parks"]
        # Each park is counted once, under one kind or the other, never both.
        check(parks + as_futex <= total * 1.01, f"{probes}: {parks} jvm-park + {as_futex} futex parks > {total} made")
        check(parks >= 0.85 * total, f"{probes}: only {parks} of {total} parks were seen as jvm-park")


@test
def frequently_acquired_fair_lock_is_the_top_blocker():
    # The thesis's Listing 5.2: two fair locks, 32 ms holds, the first chosen
    # three times as often. It is the bottleneck and must top the report.
    # Acquisitions are 3:1, but parks are not: the threads queue on the first
    # lock, which staggers their arrivals at the second, so it is seldom held
    # when they come (the thesis's Table 5.4: 3224 parks against 164). Each
    # lock's parks are checked against the workload's own count of the
    # acquisitions that waited: a fair lock hands over without barging, so
    # one waited acquisition is one park. The workload starts its threads after 500 ms:
    # parks before parktrace has recognised the JVM are futex waits (docs/limits.md,
    # Limits), which its first lock() calls would otherwise be.
    wl, final = run_java("FrequentLock", "3", "8", "500")
    check(2.5 <= wl["often"] / max(wl["rarely"], 1) <= 3.5, f"workload mix {wl}")
    fair = [b for b in jvm_rows(final) if b["class"] == "java.util.concurrent.locks.ReentrantLock$FairSync"]
    check(fair, "no ReentrantLock$FairSync rows")
    top = final["blockers"][0]
    check(top in fair and top["role"] == "lock", f"top blocker is {top['kind']} {top['class']}")
    rare = [b for b in fair if b is not top]
    rare_parks = rare[0]["parks"] if rare else 0
    check(top["parks"] >= 3 * rare_parks, f"the frequent lock parks {top['parks']}, the rare one {rare_parks}")
    for what, parks, waited in (("frequent", top["parks"], wl["often_waited"]),
                                ("rare", rare_parks, wl["rarely_waited"])):
        check(abs(parks - waited) <= 0.1 * waited + 2, f"{what} lock: {parks} parks, {waited} waited acquisitions")


@test
def condition_wait_is_a_wait_role_blocker():
    wl, final = run_java("CondQueue", "2")
    cond = [b for b in jvm_rows(final)
            if b["class"] == "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject"]
    check(len(cond) == 1, f"expected one ConditionObject row: {[b['class'] for b in jvm_rows(final)]}")
    check(cond[0]["role"] == "wait", f"ConditionObject role {cond[0]['role']}")
    check(0.8 * wl["waits"] <= cond[0]["parks"] <= wl["waits"], f"{cond[0]['parks']} parks for {wl['waits']} waits")


@test
def parks_of_short_lived_threads_are_recognised():
    # Threads that live less than one thread-list refresh: their parks are
    # found from the futex's place in the JavaThread, checked by its tid.
    wl, final = run_java("ThreadChurn", "3")
    made = wl["parks"]
    seen = sum(b["parks"] for b in jvm_rows(final) if b["class"] == "ThreadChurn$Gate")
    as_futex = sum(b["parks"] for b in final["blockers"]
                   if b["kind"] == "futex" and "Parker::park(bool, long)" in b["first_stack"])
    check(seen >= 0.85 * made, f"only {seen} of {made} parks of short-lived threads were jvm-park")
    check(seen + as_futex <= made * 1.01, f"{seen} + {as_futex} parks counted for {made} made")


@test
def a_jvm_starting_thousands_of_threads_stays_tracked():
    # Each thread's start and end replaces the JVM's thread list and frees
    # the old one under a reader outside: attached to such a JVM, parktrace
    # gave it up at one attach in two, and all its parks became futex waits.
    import subprocess
    w = subprocess.Popen(java("ThreadStorm", "9")[1:], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        for attach in range(4):
            p = run_pt(["-p", str(w.pid), "-d", "1.5", "-f", "json", "--top", "0", "--self-stats"])
            check(p.returncode == 0, p.stderr[-500:])
            st = self_stats(p.stderr)
            check(st.get("jvms_given_up") == "0", f"attach {attach}: the JVM was given up on "
                  f"(list reads failed: {st.get('jvm_lists_unread')})")
            final = final_of(json_reports(p.stdout))
            java_parks = sum(b["parks"] for b in jvm_rows(final) if b["class"] == "ThreadStorm$Gate")
            as_futex = sum(b["parks"] for b in final["blockers"]
                           if b["kind"] == "futex" and "Parker::park(bool, long)" in b["first_stack"])
            check(java_parks >= 0.85 * (java_parks + as_futex) and java_parks > 1000,
                  f"attach {attach}: {java_parks} storm parks as Java parks, {as_futex} as futex waits")
    finally:
        w.kill()
        w.wait()


@test
def system_wide_finds_a_jvm_started_later():
    import subprocess
    # Started once parktrace is tracing (its first interval report is out),
    # the JVM must be recognised from its first parks, not found by a scan.
    pt = start_pt_ready(["-d", "7", "--top", "0"])
    w = subprocess.run(["java", "-Xmx128m", "-cp", JAVA_CP, "TimedParks", "3"], capture_output=True, text=True,
                       timeout=60)
    reports, _ = finish_pt(pt, stop=True)
    check(pt[0].returncode == 0, f"parktrace exit {pt[0].returncode}")
    wl = json.loads(w.stdout.splitlines()[-1])
    final = final_of(reports)
    rows = {b["class"]: b for b in jvm_rows(final)}
    check("TimedParks$Gate" in rows, f"the JVM started after parktrace was not found: {sorted(rows)}")
    check(rows["TimedParks$Gate"]["parks"] >= 0.85 * wl["gate_parks"],
          f"{rows['TimedParks$Gate']['parks']} of {wl['gate_parks']} parks seen")


@test
def jvms_one_after_another_reuse_the_jvm_table():
    """A machine starts JVMs all day: each one tracked takes a 130 KiB entry
    of the JVM table, and an exited JVM's entry must be taken again rather
    than a fresh one touched per JVM (a soak's RSS grew by 8 MiB so). Three
    JVMs one after another, 3 s apart; each one's parks are still counted.
    Each runs 2 s: a JVM of 1 s was, once in a CI run, found or its class
    read only after its parks were over (no TimedParks$Gate row)."""
    runs = 3
    script = "; sleep 3; ".join(f"java -Xmx128m -cp {JAVA_CP} TimedParks 2" for _ in range(runs)) + "; sleep 3"
    p = run_pt(["-f", "json", "--top", "0", "--self-stats", "--", "sh", "-c", script], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-500:]}")
    own = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{") and not l.startswith('{"type":')]
    final = final_of(json_reports(p.stdout))
    check(len(own) == runs, f"{len(own)} of {runs} JVMs reported")
    gate = {}
    for b in jvm_rows(final):
        if b["class"] == "TimedParks$Gate":
            gate[b["pid"]] = gate.get(b["pid"], 0) + b["parks"]
    if len(gate) != runs:
        # Which JVM was lost, and what its parks became instead.
        lost = [w for w in own if w["pid"] not in gate]
        theirs = {w["pid"]: [(b["kind"], b.get("class"), b["parks"])
                             for b in final["blockers"] if b.get("pid") == w["pid"]] for w in lost}
        figures = " ".join(l for l in p.stderr.split() if l.startswith(("jvm", "candidates")))
        said = [l for l in p.stderr.splitlines() if not l.startswith("parktrace: self")]
        # Seen twice in CI (stop 50, a loaded run): the middle JVM never
        # tracked (jvm_entries=1, jvms_given_up=0), its parks all futex
        # waits on its threads' parkers.
        check(False, f"TimedParks$Gate rows of {len(gate)} JVMs (want {runs}): {gate}; lost "
                     f"{[(w['pid'], w['gate_parks']) for w in lost]}, their rows {theirs}; {figures}; "
                     f"parktrace said {said[-8:]}")
    for w in own:
        # Half at least: a JVM's first parks go by before it is found, a
        # larger share of a one-second run (system_wide_finds_a_jvm_started_later
        # checks the count).
        check(gate.get(w["pid"], 0) >= 0.5 * w["gate_parks"],
              f"JVM {w['pid']}: {gate.get(w['pid'], 0)} of its {w['gate_parks']} gate parks seen")
    m = re.search(r"jvm_entries=(\d+)", p.stderr)
    check(m, f"--self-stats printed no jvm_entries: {p.stderr[-600:]}")
    check(int(m.group(1)) < runs, f"{m.group(1)} JVM table entries used for {runs} JVMs one after another")


NONFAIR = "java.util.concurrent.locks.ReentrantLock$NonfairSync"
# MovingLock times whole lock() calls; those also hold the running gaps
# between one call's parks (about 1% here), which no park tracer counts.
MOVING_TOLERANCE = 0.03


@test
def moving_gc_splits_a_blocker_and_by_class_joins_it():
    """A full collection of -XX:+UseSerialGC moves MovingLock's one lock
    between its two phases (the second half as long as the first): by
    object, the lock is two rows, each holding one phase's waits; by class,
    one row holds both. -Xmn64m leaves room for the run in eden, so no
    young collection moves it a third time."""
    flags = ["-Xmn64m", "-XX:+UseSerialGC"]
    steal0 = stolen_s()
    wl, final = run_java("MovingLock", "1.5", "4", "500", jvm_flags=flags)
    stolen_ns = (stolen_s() - steal0) * 1e9
    phases = [p["blocked_ns"] for p in wl["phases"]]
    check(all(p["blocked"] >= 50 for p in wl["phases"]), f"the workload barely contended: {wl['phases']}")
    rows = sorted((b for b in jvm_rows(final) if b["class"] == NONFAIR), key=lambda b: b["thread_time_ns"])
    check(len(rows) == 2, f"by object, the moved lock should be 2 rows, got {[(b['id'], b['parks']) for b in rows]}")
    check(rows[0]["id"] != rows[1]["id"], f"both rows have the id {rows[0]['id']}")
    for b, want, what in zip(rows, sorted(phases), ("the shorter phase", "the longer phase")):
        # The workload's clock also runs while the host steals its CPU
        # inside lock() but outside a park (a CI run: 1438 ms for 1511).
        got, lo = b["thread_time_ns"], (want - stolen_ns) * (1 - MOVING_TOLERANCE)
        check(lo <= got <= want * (1 + MOVING_TOLERANCE),
              f"{what}'s row {b['id']} thread_time_ns: parktrace {got} vs workload {want} "
              f"({got / want - 1:+.1%}; {stolen_ns / 1e6:.0f} ms stolen by the host meanwhile)")
    wl, final = run_java("MovingLock", "1.5", "4", "500", jvm_flags=flags, pt_args=("--by", "class"))
    rows = [b for b in jvm_rows(final) if b["class"] == NONFAIR]
    check(len(rows) == 1, f"by class, the moved lock should be 1 row, got {len(rows)}")
    within(rows[0]["thread_time_ns"], sum(p["blocked_ns"] for p in wl["phases"]), MOVING_TOLERANCE,
           "the class row's thread_time_ns")


ALIASED_FIRST, ALIASED_SECOND = "AliasedBlocker$First", "AliasedBlocker$Second"


@test
def another_class_at_a_collected_blockers_address_is_another_blocker():
    """AliasedBlocker parks and waits on a First, drops it, has a full
    collection empty eden, and does the same on a Second that lands at the
    First's old address (the workload checks the address, and goes on until
    three rounds did). A blocker keyed by address alone took the Second's
    waits into the First's row (ZooKeeper's ConditionObject waits once
    landed in a ReentrantLock's); each class must count its own, park and
    Object.wait alike, and the park uprobes' keys too."""
    for probes in ("sched", "uprobes"):
        wl, final = run_java("AliasedBlocker", "20", "3", "500", jvm_flags=["-Xmn64m", "-XX:+UseSerialGC"],
                             pt_args=["--probes", probes])
        check(wl["aliased"] >= 1, f"no round put the two objects at one address: {wl}")
        for kind in ("jvm-park", "jvm-wait"):
            for cls, want in ((ALIASED_FIRST, wl["first"]), (ALIASED_SECOND, wl["second"])):
                got = sum(b["parks"] for b in jvm_rows(final, kind) if b["class"] == cls)
                check(abs(got - want) <= max(2, want // 50),
                      f"{probes}: {kind} {cls}: parktrace {got} waits, the workload made {want} "
                      f"({wl['aliased']} of {wl['rounds']} rounds at one address)")


@test
def heap_reads_are_kept_only_where_objects_move_in_safepoints():
    """Between two safepoints a park reuses its Thread's address and its
    blockers' classes, for JVMs whose collector moves objects only inside
    one. AliasedBlocker collects 80 times and parks and waits on objects
    of two classes from one thread throughout: under G1 the JVM keeps its
    reads and the safepoints are seen; under ZGC, which relocates objects
    while Java runs, it does not. Either way each class counts exactly the
    parks and waits the workload made."""
    for gc, kept in (("-XX:+UseG1GC", 1), ("-XX:+UseZGC", 0)):
        wl, final, err = run_java("AliasedBlocker", "10", "41", "500", jvm_flags=[gc],
                                  pt_args=["--self-stats"], want_stderr=True)
        st = dict(re.findall(r"(\w+)=(\d+)", err))
        check(int(st.get("jvms_heap_reads_kept", -1)) == kept,
              f"{gc}: jvms_heap_reads_kept {st.get('jvms_heap_reads_kept')}, want {kept}")
        if kept:
            # Two collections a round, each a safepoint's start and end.
            check(int(st.get("safepoint_edges", 0)) >= 4 * wl["rounds"],
                  f"{gc}: {st.get('safepoint_edges')} safepoint edges for {2 * wl['rounds']} collections")
        for kind in ("jvm-park", "jvm-wait"):
            for cls, want in ((ALIASED_FIRST, wl["first"]), (ALIASED_SECOND, wl["second"])):
                got = sum(b["parks"] for b in jvm_rows(final, kind) if b["class"] == cls)
                check(abs(got - want) <= max(2, want // 50),
                      f"{gc}: {kind} {cls}: parktrace {got} waits, the workload made {want}")


@test
def kinds_select_what_is_traced():
    wl, final = run_java("TimedParks", "2", pt_args=("--kinds", "jvm-park"))
    kinds = {b["kind"] for b in final["blockers"]}
    check(kinds == {"jvm-park"}, f"--kinds jvm-park traced {sorted(kinds)}")
    check(sum(b["parks"] for b in final["blockers"]) >= 0.85 * (wl["gate_parks"] + wl["free_parks"]),
          "--kinds jvm-park missed parks")
    _, final = run_java("TimedParks", "1", pt_args=("--kinds", "futex"))
    kinds = {b["kind"] for b in final["blockers"]}
    check(kinds == {"futex"}, f"--kinds futex traced {sorted(kinds)}")


LOCK = "java.util.concurrent.locks.ReentrantLock"
WORKER = "LargeCriticalSection.lambda$main$0"


@test
def java_stacks_are_named_with_preserve_frame_pointer():
    folded = os.path.join(TMP, "java-stacks.txt")
    _, final, err = run_java("LargeCriticalSection", "2", "2", jvm_flags=["-XX:+PreserveFramePointer"],
                             pt_args=["--kinds", "jvm-park", "--waker", "--collapsed", folded], want_stderr=True)
    check("PreserveFramePointer" not in err, f"a JVM with the flag was told to add it: {err.strip()}")
    waiters = [l.rpartition(" ")[0].split(";--;")[0].split(";") for l in open(folded).read().splitlines()]
    # Root first: the workload's method calls ReentrantLock.lock, which parks.
    order = [WORKER, f"{LOCK}.lock", "java.util.concurrent.locks.LockSupport.park", "Unsafe_Park"]
    check(any(all(x in f for x in order) and [f.index(x) for x in order] == sorted(f.index(x) for x in order)
              for f in waiters), f"no stack runs {' -> '.join(order)}: {waiters[:1]}")
    locks = [b for b in jvm_rows(final) if b["class"] == f"{LOCK}$NonfairSync"]
    check(len(locks) == 3, f"expected the workload's 3 lock rows, got {len(locks)}: "
                           f"{[(b['class'], b['parks']) for b in jvm_rows(final)]}")
    for b in locks:
        check(b["top_frame"] == WORKER, f"top frame {b['top_frame']}: JDK frames are not the site")
        w = b["top_waker"]
        # Who caused it: the lock holder's unlock, in the workload's method.
        check(w and f"{LOCK}.unlock" in w["stack"] and w["top_frame"] == WORKER,
              f"waker stack is not the holder's unlock: {w and w['stack']}")
        check(w["wakeups"] >= 0.9 * b["wakeups"] and b["wakeups"] >= 0.9 * (b["parks"] - b["parked_now"]),
              f"wakeups {b['wakeups']}, top waker {w['wakeups']}, parks {b['parks']}")


@test
def jit_compiled_frames_are_named_from_the_perf_map():
    # Uprobe stacks change as code is compiled, so compiled frames appear.
    folded = os.path.join(TMP, "jit-stacks.txt")
    before = set(glob.glob("/tmp/perf-*.map"))
    # 6 s: C2 compiles the ping-pong loop (inlining LockSupport.park) 1-2.5 s
    # in on a quiet host; in 4 s a CI run on a host stealing CPU had none yet.
    run_java("PingPong", "-s", "6", jvm_flags=["-XX:+PreserveFramePointer"],
             pt_args=["--probes", "uprobes", "--kinds", "jvm-park", "--collapsed", folded])
    stacks = [l.rpartition(" ")[0].split(";") for l in open(folded).read().splitlines()]
    stubless = [s for s in stacks if "[StubRoutines (1)]" not in s]
    check(stacks and not stubless, f"the call stub is not named from the perf map: {stubless}")
    unnamed = [f for s in stacks for f in s if f in ("[jit-compiled]", "[unknown]")]
    check(not unnamed, f"{len(unnamed)} Java frames left unnamed: {stacks}")
    # Compiled, the lambda has LockSupport.park inlined: it calls Unsafe.park itself.
    check(any(s[i].startswith("PingPong.lambda$main$") and s[i + 1] == "jdk.internal.misc.Unsafe.park"
              for s in stacks for i in range(len(s) - 1)), f"no JIT-compiled PingPong frame: {stacks}")
    check(set(glob.glob("/tmp/perf-*.map")) <= before, "parktrace left the perf map it caused behind")


@test
def missing_preserve_frame_pointer_is_said_once():
    # Only stack copies need the flag; the kernel's walk sizes compiled frames itself.
    _, final, err = run_java("LargeCriticalSection", "1", "2", pt_args=["--kinds", "jvm-park", "--unwind", "copy"],
                             want_stderr=True)
    said = [l for l in err.splitlines() if "-XX:+PreserveFramePointer" in l]
    check(len(said) == 1 and "restart" in said[0].lower(), f"expected one line of advice: {err.strip()}")
    _, _, err = run_java("LargeCriticalSection", "1", "2", pt_args=["--kinds", "jvm-park"], want_stderr=True)
    check("PreserveFramePointer" not in err, f"advice given where the kernel walks Java frames: {err.strip()}")
    check(len([b for b in jvm_rows(final) if b["class"] == f"{LOCK}$NonfairSync"]) == 3,
          "blockers must be reported without the flag too")


@test
def uprobe_probe_mode_times_parks_once_and_counts_fast_parks():
    # The plain way: uprobes on Unsafe_Park/Unsafe_Unpark, futex waits still traced.
    wl, final = run_java("LargeCriticalSection", "2", "3", pt_args=["--probes", "uprobes"])
    locks = sorted((b for b in jvm_rows(final) if b["class"] == f"{LOCK}$NonfairSync"),
                   key=lambda b: b["avg_hold_ns"])
    check(len(locks) == 3, f"expected 3 lock rows, got {len(locks)}")
    for b, hold in zip(locks, sorted(wl["holds"], key=lambda h: h["preset_ms"])):
        hold_estimate_within(b, hold, "uprobes: ")
        done = b["parks"] - b["parked_now"]
        check(b["wakeups"] >= 0.95 * done, f"uprobes: {b['wakeups']} unparked of {done} parks")
        check(b["top_waker"] and "Unsafe_Unpark" in b["top_waker"]["stack"],
              f"uprobes: waker stack is not an unpark: {b['top_waker']}")
    wl, final = run_java("FastParks", "3000", pt_args=["--probes", "uprobes", "--kinds", "jvm-park"])
    token = [b for b in jvm_rows(final) if b["class"] == "FastParks$Token"]
    check(len(token) == 1 and token[0]["parks"] == 0, f"parks with a permit counted as waits: {token}")
    check(0.95 * wl["fast"] <= token[0]["fast_parks"] <= wl["fast"],
          f"{token[0]['fast_parks']} fast parks seen of {wl['fast']}")


@test
def grouping_java_blockers_by_class_and_site_conserves_totals():
    # A moving GC can give one lock several object rows; class and site
    # groups do not depend on the object's address.
    for by in ("class", "site"):
        _, final = run_java("LargeCriticalSection", "1.5", "3", pt_args=["--by", by, "--kinds", "jvm-park"],
                            jvm_flags=["-XX:+UseSerialGC", "-XX:+PreserveFramePointer"])
        rows = jvm_rows(final)
        check(sum(b["parks"] for b in rows) == final["totals"]["waits"], f"--by {by}: groups lose or invent waits")
        key = (lambda b: b["class"]) if by == "class" else (lambda b: b["top_frame"])
        check(len({key(b) for b in rows}) == len(rows), f"--by {by}: a group appears twice")
        group = [b for b in rows if key(b) == (f"{LOCK}$NonfairSync" if by == "class" else WORKER)]
        check(len(group) == 1, f"--by {by}: the three locks are not one group: {[key(b) for b in rows]} "
                               f"(dropped_stacks {final['totals']['dropped_stacks']})")
        check(group[0]["parks"] >= 0.9 * final["totals"]["waits"], f"--by {by}: the lock group lacks parks")


@test
def synchronized_and_object_wait_are_monitor_and_wait_rows():
    # Listing 5.1 with `synchronized`, and a consumer in Object.wait; no JVM
    # flags. The threads start after 500 ms, once parktrace knows the JVM.
    wl, final = run_java("SyncLocks", "3", "3", "500")
    mons = sorted((b for b in jvm_rows(final, "jvm-monitor") if b["class"] == "SyncLocks$Resource"),
                  key=lambda b: b["avg_hold_ns"])
    check(len(mons) == 3, f"expected 3 jvm-monitor rows, got {[(b['kind'], b['class']) for b in jvm_rows(final, 'jvm-monitor')]}")
    for b, hold in zip(mons, sorted(wl["holds"], key=lambda h: h["preset_ms"])):
        hold_ms = hold["preset_ms"]
        check(b["role"] == "lock", f"{hold_ms} ms monitor role {b['role']}")
        # HotSpot's "responsible" waiter parks with a timeout and, timed
        # out, parks again: one entry, two waits, so avg_hold_ns (real time
        # over waits) is the hold scaled by entries over waits.
        done = b["parks"] - b["parked_now"]
        within(b["avg_hold_ns"], hold["mean_hold_ns"] * (done - b["timeouts"]) / done, 0.03,
               f"{hold_ms} ms monitor avg_hold_ns")
        check(b["top_frame"] == "SyncLocks.lambda$main$0", f"monitor top frame {b['top_frame']}")
        check(b["top_waker"] and b["top_waker"]["top_frame"] == "SyncLocks.lambda$main$0",
              f"the releasing thread is not the waker: {b['top_waker']}")
    top = max(mons, key=lambda b: b["thread_time_ns"])
    check(top is mons[2], "the 64 ms monitor must have the most thread time")
    waits = [b for b in jvm_rows(final, "jvm-wait") if b["class"] == "SyncLocks$Queue"]
    check(len(waits) == 1 and waits[0]["role"] == "wait", f"Object.wait rows: {waits}")
    # One Object.wait is one wait: every call made after the start delay is seen.
    check(wl["waits"] - 1 <= waits[0]["parks"] <= wl["waits"], f"{waits[0]['parks']} jvm-wait waits for {wl['waits']} calls")
    check(waits[0]["top_waker"] and waits[0]["top_waker"]["top_frame"] == "SyncLocks.lambda$main$1",
          f"the notifying producer is not the waker: {waits[0]['top_waker']}")


@test
def kinds_jvm_monitor_and_jvm_wait_select_their_rows():
    # SyncLocks has both kinds (and JDK parks and futex waits besides): each
    # --kinds value keeps its own rows only, with the workload's counts. Its
    # threads start after 500 ms: waits before parktrace has recognised the
    # JVM are futex waits (docs/limits.md).
    for kind in ("jvm-monitor", "jvm-wait"):
        wl, final = run_java("SyncLocks", "2", "3", "500", pt_args=("--kinds", kind))
        kinds = {b["kind"] for b in final["blockers"]}
        check(kinds == {kind}, f"--kinds {kind} traced {sorted(kinds)}")
        if kind == "jvm-monitor":
            mons = [b for b in final["blockers"] if b["class"] == "SyncLocks$Resource"]
            check(len(mons) == 3, f"--kinds jvm-monitor: {len(mons)} SyncLocks$Resource rows, want 3")
            # Times, not counts: a monitor is not fair, and a woken entry that
            # loses the monitor parks again. Its entries are nearly all
            # blocked time (HotSpot spins some us before it parks, against
            # waits of several ms).
            for b, hold in zip(sorted(mons, key=lambda b: b["avg_hold_ns"]),
                               sorted(wl["holds"], key=lambda h: h["preset_ms"])):
                within(b["thread_time_ns"], hold["entry_ns"], 0.03, f"{hold['preset_ms']} ms monitor thread time")
        else:
            waits = [b for b in final["blockers"] if b["class"] == "SyncLocks$Queue"]
            # One more now and then: a notified waiter that finds the
            # monitor held sleeps again to take it back, still inside
            # wait() (bpf/jvm.bpf.h, monitor_key), a second park of its
            # call (a CI run: 99 for 98 calls).
            check(len(waits) == 1 and wl["waits"] - 1 <= waits[0]["parks"] <= wl["waits"] * 1.03 + 1,
                  f"--kinds jvm-wait: {[b['parks'] for b in waits]} waits for {wl['waits']} Object.wait calls")


@test
def thread_join_is_a_wait_on_the_thread():
    # Thread.join is Object.wait on the Thread: one jvm-wait row per joined
    # thread, wait role, and together the time main spent joining.
    wl, final = run_java("ThreadJoin", "3", "300", "500")
    rows = [b for b in jvm_rows(final, "jvm-wait") if b["class"] == "java.lang.Thread"]
    check(len(rows) == wl["joins"], f"{len(rows)} java.lang.Thread jvm-wait rows for {wl['joins']} joins")
    check(all(b["role"] == "wait" and b["csp"] is None and b["top_frame"] == "ThreadJoin.main" for b in rows),
          f"join rows: {[(b['role'], b['csp'], b['top_frame']) for b in rows]}")
    within(sum(b["thread_time_ns"] for b in rows), wl["join_ns"], 0.03, "time waited in Thread.join")


@test
def csp_counts_threads_born_and_dying_while_watched():
    # Some 270 threads of ~15 ms each, one or two alive at a time, contend for
    # one lock; their lives are all working time and main only sleeps. CSP
    # is their time in lock() over their lives. parktrace sees less: the
    # blocked part of lock() and, in the working time, the JVM's own work
    # (start-up, compiling, collecting: 10% of the threads' 4 s of lives, and
    # up to as much again when a busy machine keeps it runnable). A dead
    # thread still counted alive would make CSP a tenth of the workload's;
    # a thread born unseen, more than it.
    wl, final, err = run_java("ChurnLock", "3", "500", pt_args=("--self-stats",), want_stderr=True)
    rows = [b for b in jvm_rows(final) if b["class"] == f"{LOCK}$NonfairSync"]
    check(rows and None not in [b["csp"] for b in rows], f"no lock rows with a CSP: {rows}")
    # The collector moves the lock as threads come and go: one row per place,
    # all over the same working time, so their CSPs add up.
    csp, ref = sum(b["csp"] for b in rows), wl["wait_ns"] / wl["alive_ns"]
    # It has failed twice under CI at a third of the workload's figure: the
    # message says whether a lock row went missing or the working time grew.
    # Once (a quiet CI run) one row of 166 parks was all: the message also
    # holds every row of the threads' own frame or a blind or unknown one,
    # whatever its kind, and the run's drops and JVM figures.
    lock_rows = [(b["kind"], b["class"], b["top_frame"], b["parks"], b["thread_time_ns"], b["csp"])
                 for b in final["blockers"]
                 if b["top_frame"] in ("ChurnLock.lambda$main$0", "Parker::park", "Unsafe_Park")
                 or b["class"] in (f"{LOCK}$NonfairSync", "<unknown class>")]
    figures = " ".join(w for w in err.split() if w.startswith(("drop_", "java_", "jvm", "stack_budget", "lost_")))
    check(0.5 * ref <= csp <= 1.05 * ref,
          f"CSP {csp:.4f} of the churning lock, the workload's {ref:.4f} (its {wl['threads']} threads waited "
          f"{wl['wait_ns']} ns in lock() over {wl['alive_ns']} ns of lives; parktrace's rows there "
          f"(kind, class, top frame, parks, ns, CSP): {lock_rows}; processes: {final.get('processes')}; "
          f"{figures})")


@test
def grouped_rows_are_bounded_by_the_workload():
    # A fair lock hands over without barging: a lock() that found the lock
    # held or queued parks once, so the class and site groups hold exactly
    # the workload's waited acquisitions of its two locks, no more (a site
    # cannot have more parks than its objects) and no fewer.
    for by, key in (("class", f"{LOCK}$FairSync"), ("site", "FrequentLock.lambda$main$0")):
        wl, final = run_java("FrequentLock", "2", "6", "500", pt_args=("--by", by, "--kinds", "jvm-park"))
        group = [b for b in jvm_rows(final) if (b["class"] if by == "class" else b["top_frame"]) == key]
        check(len(group) == 1, f"--by {by}: expected one {key} group, got {len(group)} of "
              f"{[(b['class'], b['top_frame'], b['parks']) for b in jvm_rows(final)]}")
        waited = wl["often_waited"] + wl["rarely_waited"]
        check(abs(group[0]["parks"] - waited) <= 0.05 * waited + 2,
              f"--by {by}: {group[0]['parks']} parks in the group, {waited} waited acquisitions")


@test
def a_site_of_two_classes_is_one_site_and_two_classes():
    # One method waits on a fair and a nonfair ReentrantLock: --by class
    # keeps them apart, --by site makes one "(several)" row of both. Their
    # park times are held to JFR's jdk.ThreadPark in the same JVM (5%),
    # which times the same parks; the workload's own lock() time bounds
    # them from above only: it adds lock()'s time outside the park (a CI
    # run's nonfair lock, 107 ms of lock() in all, parked 9% less).
    jfc = os.path.join(TMP, "mixedsite.jfc")
    with open(jfc, "w") as f:
        f.write(PARK_JFC)
    for by in ("class", "site"):
        rec = os.path.join(TMP, f"mixedsite-{by}.jfr")
        wl, final = run_java("MixedSite", "2", "4", "500", pt_args=("--by", by, "--kinds", "jvm-park"),
                             jvm_flags=[f"-XX:StartFlightRecording:filename={rec},dumponexit=true,settings={jfc}"])
        jfr = {c: v[1] for c, v in jfr_parks(rec).items()}
        rows = [b for b in jvm_rows(final) if b["top_frame"] == "MixedSite.lambda$main$0"]
        if by == "class":
            got = {b["class"]: b["thread_time_ns"] for b in rows}
            check(sorted(got) == [f"{LOCK}$FairSync", f"{LOCK}$NonfairSync"], f"--by class: rows {sorted(got)}")
            for cls, lock_ns in ((f"{LOCK}$FairSync", wl["fair_ns"]), (f"{LOCK}$NonfairSync", wl["nonfair_ns"])):
                within(got[cls], jfr.get(cls, 0), 0.05, f"{cls} park time", ref="JFR")
                check(got[cls] <= lock_ns * 1.01, f"{cls}: parked {got[cls]} ns, more than lock() took ({lock_ns})")
        else:
            # Its class reads "(several)" (docs/metrics.md), whichever member
            # is the heavier (user/model/group.c once took the heavier member's).
            check(len(rows) == 1 and rows[0]["class"] == "(several)",
                  f"--by site: {[(b['class'], b['top_frame']) for b in rows]}")
            both = jfr.get(f"{LOCK}$FairSync", 0) + jfr.get(f"{LOCK}$NonfairSync", 0)
            within(rows[0]["thread_time_ns"], both, 0.05, "the site's park time", ref="JFR")
            check(rows[0]["thread_time_ns"] <= (wl["fair_ns"] + wl["nonfair_ns"]) * 1.01,
                  f"the site parked {rows[0]['thread_time_ns']} ns, more than lock() took")


@test
def waker_profile_blames_the_releasing_method():
    """Every wait on WakerBlame's lock is ended by releaseAfterHold's
    unlock: the waker profile charges them to it. Waker stacks walked
    before parktrace knew the JVM have their interpreted frames unnamed
    (docs/limits.md: `[Interpreter]`), and are left out; under load the
    JVM is found later (28% of a 2 s run's waits in one run), so they may
    be up to half."""
    folded = os.path.join(TMP, "blame.txt")
    _, final = run_java("WakerBlame", "2", jvm_flags=["-XX:+PreserveFramePointer"],
                        pt_args=["--kinds", "jvm-park", "--waker", "--collapsed", folded])
    lock = [b for b in jvm_rows(final) if b["class"] == f"{LOCK}$NonfairSync"]
    check(len(lock) == 1, f"expected one lock row: {[b['class'] for b in jvm_rows(final)]}")
    total = blamed = blind = 0
    for line in open(folded).read().splitlines():
        frames, _, us = line.rpartition(" ")
        if f"[{LOCK}$NonfairSync]" not in frames:
            continue
        total += int(us)
        waker = (frames.split(";--;")[1] if ";--;" in frames else "").split(";")
        if "[Interpreter]" in waker or "[interpreted]" in waker:
            blind += int(us)
        else:
            blamed += int(us) if "WakerBlame.releaseAfterHold" in waker else 0
    check(total > 0.5 * lock[0]["thread_time_ns"] / 1000, f"collapsed lines hold {total} us of the lock's waits")
    check(blind <= 0.5 * total, f"{blind} of {total} us of waits have waker stacks walked before the JVM was known")
    check(blamed >= 0.9 * (total - blind),
          f"only {blamed} of {total - blind} us of waits charged to releaseAfterHold ({blind} us walked blind)")
    svg = os.path.join(TMP, "blame.svg")
    with open(svg, "w") as out:
        r = subprocess.run(["perl", FLAMEGRAPH, folded], stdout=out, stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0 and "releaseAfterHold" in open(svg).read(), f"flamegraph.pl: {r.stderr}")


def jdk_with_stripped_libjvm():
    """A copy of Debian's JDK 17 whose libjvm has no .symtab (symlinks for the rest)."""
    src, dst = "/usr/lib/jvm/java-17-openjdk-amd64", os.path.join(TMP, "stripped-jdk")
    if not os.path.exists(dst):
        subprocess.run(["cp", "-as", src, dst], check=True)
        for rel in ("bin/java", "lib/server/libjvm.so"):
            os.unlink(os.path.join(dst, rel))
            subprocess.run(["cp", os.path.join(src, rel), os.path.join(dst, rel)], check=True)
        subprocess.run(["strip", "--strip-all", os.path.join(dst, "lib/server/libjvm.so")], check=True)
    return os.path.join(dst, "bin/java")


@test
def jvm_without_symbols_is_one_line_and_futex_rows():
    java_bin = jdk_with_stripped_libjvm()
    p = run_pt(["-f", "json", "--top", "0", "--", java_bin, "-Xmx128m", "-cp", JAVA_CP, "TimedParks", "1.5"],
               timeout=90)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()}")
    said = [l for l in p.stderr.splitlines() if l.startswith("parktrace: JVM")]
    check(len(said) == 1 and "futex waits" in said[0], f"expected one line about the JVM: {p.stderr.strip()}")
    final = final_of(json_reports(p.stdout))
    check(not jvm_rows(final), "jvm-park rows from a JVM whose layout could not be read")
    own = [l for l in p.stdout.splitlines() if l.startswith("{") and not l.startswith('{"type":')]
    wl = json.loads(own[-1])
    pid = int(said[0].split()[2].rstrip(":"))
    parks = sum(b["parks"] for b in final["blockers"] if b["kind"] == "futex" and b["pid"] == pid)
    check(parks >= 0.85 * (wl["gate_parks"] + wl["free_parks"]),
          f"the JVM's parks were not traced as futex waits: {parks} of {wl['gate_parks'] + wl['free_parks']}")


@test
def classes_named_of_waits_just_before_the_jvm_exits():
    """ParkMix's main joins its threads in its last 100 ms, and the JVM
    exits: classes were named from the JVM's memory at parktrace's next
    housekeeping (200 ms), after the exit, and its joins read
    "<unknown class>". A class new to a thread's blockers now wakes user
    space to name it while the JVM runs: every Java row has its class."""
    for run in range(2):
        _, final = run_java("ParkMix", "3", "600")
        rows = [b for b in final["blockers"] if b["kind"].startswith("jvm-")]
        unknown = [(b["kind"], b["top_frame"], b["parks"], b["thread_time_ns"]) for b in rows
                   if b["class"].startswith("<") and b["class"] != "<no blocker>"]
        check(rows and not unknown, f"run {run}: Java rows with no class: {unknown}")
        joins = [b for b in rows if b["kind"] == "jvm-wait" and b["top_frame"] == "ParkMix.main"]
        check(joins and all(b["class"] == "java.lang.Thread" for b in joins),
              f"run {run}: main's joins {[(b['class'], b['parks']) for b in joins]}")


if __name__ == "__main__":
    main()
