#!/usr/bin/python3
"""Java frames are named whenever they can be, against what the workloads
are known to run: JVMs started with `parktrace -- java ...` whose threads
park from the very start, before parktrace has found the JVM (those first
parks are futex waits whose stacks were walked without the JVM's layout),
and that exit before the final report is written (so every Java frame must
have been named while the JVM ran, or from what parktrace kept of it).

  - the workload's own blockers (its jvm-park rows) name the workload's
    method in their first stack, which is never empty;
  - no jvm-park row shows [unknown] right above Unsafe_Park (the native
    wrapper of Unsafe.park lies in the JVM's code cache);
  - no row of the JVM shows [unknown] right above a JVM entry point
    (Unsafe_Park, JVM_Sleep, JVM_MonitorWait, JVM_WaitForReferencePendingList):
    a frame there is Java code, named, or said to be [interpreted] or
    [jit-compiled] when its name cannot be had (an interpreted frame walked
    before the JVM was known has no Method*);
  - the same for every stack of the collapsed output, not only first stacks.
"""
import json
import os

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

# Native entry points called from Java code: the frame above one is Java code.
JVM_ENTRIES = ("Unsafe_Park", "JVM_Sleep", "JVM_MonitorWait", "JVM_WaitForReferencePendingList")


RUN_FIGURES = ""


def run_java(args, collapsed=None, cache=None):
    """parktrace -- java ARGS from its start (fresh unwind cache: the JVM is
    found late; CACHE names another, still empty); the workload's own JSON
    line and the final report."""
    extra = ["--collapsed", collapsed] if collapsed else []
    extra += ["--unwind-cache", cache] if cache else []
    p = run_pt(["-f", "json", "--top", "0", "--self-stats", *extra, "--", "java", "-Xmx128m", "-cp", JAVA_CP,
                *args], timeout=120)
    check(p.returncode == 0, p.stderr)
    # What a failure's message adds: how the JVM was found and its blind stacks.
    global RUN_FIGURES
    RUN_FIGURES = " ".join(w for w in p.stderr.split()
                           if w.startswith(("java_", "jvm", "unwind_cached=", "unwind_walks=", "stack_budget")))
    own = [l for l in p.stdout.splitlines() if l.startswith("{") and not l.startswith('{"type":')]
    return (json.loads(own[-1]) if own else None), final_of(json_reports(p.stdout))


def unnamed_above(stack, entries=JVM_ENTRIES):
    """The entry points in STACK (innermost first) whose caller reads [unknown]."""
    return [f for i, f in enumerate(stack[:-1]) if f in entries and stack[i + 1] == "[unknown]"]


def gap_if_misread(stacks, what):
    if stacks and all(misread_return(st) for st in stacks):
        known_gap("java_walk_misreads_return_above_unsafe_park", what, len(stacks))


def show(b):
    return f"{b['kind']} {b['class']} parks={b['parks']}: {' <- '.join(b['first_stack'][:14])}"


def check_rows(final, workload, own_classes, name):
    rows = final["blockers"]
    check(rows, f"{name}: no rows")
    own = [b for b in rows if b["kind"] == "jvm-park" and b["class"] in own_classes]
    check(own, f"{name}: none of the workload's blockers ({own_classes}) among "
               f"{sorted({(b['kind'], b['class']) for b in rows})}")
    for b in own:
        check(b["first_stack"], f"{name}: a blocker of the workload with an empty first stack: {show(b)}")
        check(any(f.startswith(workload + ".") for f in b["first_stack"]),
              f"{name}: a blocker of the workload whose first stack has no {workload} method: {show(b)} "
              f"({RUN_FIGURES})")
    parks = [b for b in rows if b["kind"] == "jvm-park" and unnamed_above(b["first_stack"], ("Unsafe_Park",))]
    offenders = [b["first_stack"] for b in rows if unnamed_above(b["first_stack"])]
    gap_if_misread(offenders, f"{name}: {[show(b) for b in rows if unnamed_above(b['first_stack'])][:2]}")
    check(not parks, f"{name}: {len(parks)} jvm-park rows with [unknown] right above Unsafe_Park, such as "
                     f"{[show(b) for b in parks[:2]]}")
    bad = [b for b in rows if unnamed_above(b["first_stack"])]
    check(not bad, f"{name}: {len(bad)} rows with [unknown] right above a JVM entry point, such as "
                   f"{[show(b) for b in bad[:2]]}")
    # The early parks were seen (else this run tested nothing of the kind).
    return [b for b in rows if b["kind"] == "futex" and "Unsafe_Park" in b["first_stack"]]


@test
def early_parks_named():
    # Four threads pass a token round from main's first moment (EarlyParks.pass),
    # for 3 s; the JVM exits before the final report.
    folded = os.path.join(TMP, "early.folded")
    # The premise: parks before the JVM was found (the passers park from
    # main's first moment, and the JVM is read once its layout is, every
    # 40 ms while it starts). A race: won in about half the runs under
    # load by hand, lost in a CI run and in three runs of a loaded one; so
    # up to six runs, each checked whole, each with an empty unwind cache
    # (libjvm's table from the cache makes the JVM known sooner).
    for attempt in range(6):
        wl, final = run_java(["EarlyParks", "3"], collapsed=folded, cache=os.path.join(TMP, f"early-cache-{attempt}"))
        check(wl and wl["passes"] > 0, f"EarlyParks passed no token: {wl}")
        early = check_rows(final, "EarlyParks",
                           ("java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject",
                            "java.util.concurrent.locks.ReentrantLock$NonfairSync"), "EarlyParks")
        print(f"  EarlyParks: {len(early)} futex rows of parks from before the JVM was found", flush=True)
        if early:
            break
    check(early, "no park came before parktrace found the JVM in six runs: nothing early was tested")
    bad, stacks = [], []
    for line in open(folded):
        frames = line.rsplit(" ", 1)[0].split(";")
        # Collapsed stacks run outermost first.
        if unnamed_above(frames[::-1]):
            bad.append(line[:300])
            stacks.append(frames[::-1])
    gap_if_misread(stacks, f"EarlyParks collapsed: {bad[:2]}")
    check(not bad, f"EarlyParks: {len(bad)} collapsed stacks with [unknown] right above a JVM entry point, "
                   f"such as {bad[:2]}")


@test
def thread_pool_named():
    # The pool's producer and workers park from the start of main (after
    # filling a 1 MiB buffer); the JVM exits after 3 s.
    _, final = run_java(["ThreadPool", "-s", "3"])
    check_rows(final, "ThreadPool", ("java.util.concurrent.Semaphore$NonfairSync",), "ThreadPool")


if __name__ == "__main__":
    main()
