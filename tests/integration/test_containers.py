#!/usr/bin/python3
"""Issue 41: JVMs in containers. A JVM run in its own PID and mount
namespaces (unshare), traced from the host with -p HOSTPID, gets its parks
charged to their classes as the same JVM outside them does: its thread
list holds its namespace's thread ids, which the host does not use."""
import json
import os
import subprocess
import time

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

GATE = "TimedParks$Gate"


def child_of(pid, timeout=10):
    """The first child of PID, once it has one."""
    path = f"/proc/{pid}/task/{pid}/children"
    found = []
    wait_for(lambda: (found.extend(open(path).read().split()) or found), f"a child of {pid}", timeout)
    return int(found[0])


def start_timed_parks(seconds, in_namespaces):
    """TimedParks run for SECONDS, in new PID and mount namespaces (unshare)
    or not: (the process, the JVM's host pid), once its four threads park."""
    cmd = ["java", "-Xmx64m", "-cp", JAVA_CP, "TimedParks", str(seconds)]
    if in_namespaces:
        cmd = ["unshare", "--pid", "--fork", "--mount", "--mount-proc", *cmd]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    jvm = child_of(p.pid) if in_namespaces else p.pid
    wait_mapped(jvm, "libjvm.so")
    # Its four parking threads are up (gate-0 .. free-3).
    wait_for(lambda: sum(open(f"/proc/{jvm}/task/{t}/comm").read().startswith(("gate-", "free-"))
                         for t in os.listdir(f"/proc/{jvm}/task")
                         if os.path.exists(f"/proc/{jvm}/task/{t}/comm")) >= 4, "TimedParks's threads", 20)
    return p, jvm


def traced(in_namespaces):
    """parktrace -p attached to a running TimedParks for 2 s: its rows of the
    JVM, the JVM's nspid status line, and its own report."""
    p, jvm = start_timed_parks(5, in_namespaces)
    try:
        nspid = [l for l in open(f"/proc/{jvm}/status") if l.startswith("NSpid:")][0].split()[1:]
        r = run_pt(["-p", str(jvm), "-d", "2", "-f", "json", "--top", "0"], timeout=60)
        check(r.returncode == 0, f"parktrace exit {r.returncode}: {r.stderr[-300:]}")
        final = final_of(json_reports(r.stdout))
    finally:
        out = p.communicate(timeout=30)[0]
    wl = json.loads(out.splitlines()[-1])
    return [b for b in final["blockers"] if b["pid"] == jvm], nspid, wl


def parker_futex_parks(rows):
    """Parks left as futex waits on a thread's parker: not seen as Java parks."""
    return sum(b["parks"] for b in rows if b["kind"] == "futex" and
               any(f.startswith(("Parker::park", "Unsafe_Park")) for f in b["first_stack"]))


@test
def a_jvm_in_its_own_pid_namespace_is_a_jvm():
    # The same JVM inside and outside new PID and mount namespaces, each
    # traced by host pid after its threads started: the same classes,
    # parks of 1 ms, and no park left a futex wait.
    got = {}
    for inside in (False, True):
        rows, nspid, wl = traced(inside)
        where = "in its namespaces" if inside else "outside"
        check(len(nspid) == (2 if inside else 1), f"{where}: NSpid {nspid}")
        gate = [b for b in rows if b["kind"] == "jvm-park" and b["class"] == GATE]
        check(gate, f"{where}: no {GATE} row among {sorted({(b['kind'], b['class']) for b in rows})}")
        parks = sum(b["parks"] for b in gate)
        avg = sum(b["thread_time_ns"] for b in gate) / parks
        check(0.9e6 <= avg <= 1.6e6, f"{where}: {GATE}'s parks average {avg:.0f} ns, the workload's 1 ms")
        stray = parker_futex_parks(rows)
        check(stray <= 0.02 * parks, f"{where}: {stray} parks left futex waits on a parker, {parks} on {GATE}")
        got[inside] = parks
    # 2 s of two threads parking 1 ms at a time, attached alike: alike.
    within(got[True], got[False], 0.15, f"{GATE} parks in namespaces", "outside them")


if __name__ == "__main__":
    main()
