#!/usr/bin/python3
"""Critical section pressure and phases (Free Lunch) under real BPF, on
workloads whose CSP is known by construction."""
import datetime
import json
import os
import subprocess
import time

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

PINGPONG = os.path.join(BUILD, "workloads", "lock_pingpong")


def traced(cmd, pt_args=()):
    p = run_pt(["-f", "json", "--top", "0", *pt_args, "--", *cmd], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()}")
    own = [l for l in p.stdout.splitlines() if l.startswith("{") and not l.startswith('{"type":')]
    return (json.loads(own[-1]) if own else None), json_reports(p.stdout)


def java(*args):
    return ["java", "-Xmx128m", "-cp", JAVA_CP, *args]


def players_at_real_time(cmd, pidfile):
    """CMD run so that its process writes its pid to PIDFILE, and a thread
    that, once that process runs its threads player-0 and player-1, puts
    those two (and only they) at real-time priority. Returns (command,
    thread); join the thread after the run."""
    import threading

    def raise_players():
        deadline = time.time() + 30
        raised = set()
        while len(raised) < 2 and time.time() < deadline:
            try:
                pid = int(open(pidfile).read())
                for tid in os.listdir(f"/proc/{pid}/task"):
                    if tid not in raised and open(f"/proc/{pid}/task/{tid}/comm").read().startswith("player-"):
                        os.sched_setscheduler(int(tid), os.SCHED_FIFO, os.sched_param(1))
                        raised.add(tid)
            except (OSError, ValueError):
                pass
            time.sleep(0.01)
        players.raised = len(raised)
    players = threading.Thread(target=raise_players, daemon=True)
    players.start()
    return ["sh", "-c", f'echo $$ > {pidfile}; exec "$@"', "sh", *cmd], players


# Seconds the host may steal from one 4 s ping-pong run before it takes the
# players' turns away (0.53 s stolen: the workload's own CSP 0.463, untraced).
STEAL_BREAKS_TURNS_S = 0.5


def ping_pong_run(cmd, pidfile=os.path.join(TMP, "pingpong.pid")):
    """One traced run of a ping-pong CMD with its two players at real-time
    priority: (workload figures, reports, players raised). The premise, a
    core for each player: real-time priority above any load the machine has
    (make test-loaded keeps a core busy; nice -10 was not enough: the
    players' own CSP 0.06), so that they take turns at the lock rather than
    at a CPU. One player spins at a time, so a core stays for the rest. A
    JVM's threads all at real-time priority made a monitor's handoffs bunch
    (a steady CSP of 0.85 once), and the JVM at nice -10 under load did not
    take turns (the players' own CSP 0.078): its two players alone are
    raised, once they run."""
    if cmd[0] == PINGPONG:
        wl, reports = traced(["chrt", "-f", "1", *cmd], ("--interval", "1s"))
        return wl, reports, 2
    if os.path.exists(pidfile):
        os.unlink(pidfile)
    run, players = players_at_real_time(cmd, pidfile)
    wl, reports = traced(run, ("--interval", "1s"))
    players.join(timeout=30)
    return wl, reports, getattr(players, "raised", 0)


def process_ms(report, pid):
    """PID's (working, lived, idle) time in REPORT and its six heaviest rows
    (role, kind, class, first thread, ms), in ms: where its working time
    came from when a CSP missed."""
    procs = [(p["working_ns"] // 1000000, p["lived_ns"] // 1000000, p["idle_ns"] // 1000000)
             for p in report["processes"] if p["pid"] == pid]
    rows = sorted((b for b in report["blockers"] if b["pid"] == pid), key=lambda b: -b["thread_time_ns"])
    return procs, [(b["role"], b["kind"], b["class"], b["first_thread"], b["thread_time_ns"] // 1000000)
                   for b in rows[:6]]


def windows_ms(reports, kind, cls):
    """Each interval's (thread time of the CLS rows, working time of their
    processes) in ms: what a failing window's CSP was made of."""
    out = []
    for r in [r for r in reports if r["type"] == "interval"]:
        rows = [b for b in r["blockers"] if b["kind"] == kind and b["class"] == cls]
        pids = {b["pid"] for b in rows}
        out.append((sum(b["thread_time_ns"] for b in rows) // 1000000,
                    sum(p["working_ns"] for p in r["processes"] if p["pid"] in pids) // 1000000))
    return out


@test
def ping_pong_csp_is_one_half():
    # Two threads take turns holding one lock: one always holds, one always
    # waits. The other threads only sleep, which is idle time (metrics.md:
    # working time is measured by the scheduler), so whatever they do the
    # CSP stays one half: main in sleep() then pthread_join(), ten threads
    # idle in epoll_wait, a JVM's main in Thread.sleep.
    cases = [("pthread mutex, main in sleep() and join", [PINGPONG, "-s", "4", "-m", "sleep"], "futex",
              "pthread_mutex"),
             ("pthread mutex, ten threads in epoll_wait", [PINGPONG, "-s", "4", "-e", "10"], "futex",
              "pthread_mutex"),
             ("ReentrantLock, main in Thread.sleep", java("LockPingPong", "juc", "4", "500", "sleep"), "jvm-park",
              "java.util.concurrent.locks.ReentrantLock$FairSync"),
             ("synchronized", java("LockPingPong", "sync", "4"), "jvm-monitor", "LockPingPong$Token")]
    stolen_from = []    # the cases whose premise the host took away
    for what, cmd, kind, cls in cases:
        # The premise is the machine's, not parktrace's: a run in which the
        # players still did not take turns (a CI run under a hypervisor that
        # stole CPU read the workload's own CSP 0.201, and another 0.273 in
        # three runs in a row) is run again, up to five times; parktrace's
        # figures are checked on the last run only.
        steals = []
        for _ in range(5):
            steal0 = stolen_s()
            wl, reports, raised = ping_pong_run(cmd)
            steals.append(stolen_s() - steal0)
            # lock_pingpong's players live from their start to the deadline: 4 s each.
            ref = wl["lock_ns"] / wl.get("alive_ns", 8e9)
            if ref >= 0.45:
                break
            print(f"INFO {what}: the players did not take turns (the workload's own CSP {ref:.3f}, "
                  f"{steals[-1]:.2f} s stolen by the host meanwhile): run again", flush=True)
        # The reference value needs a core for each player: where they still
        # ran in turn and seldom waited, the workload saw it too, and the
        # run proves nothing of one half. A host that steals a vCPU right as
        # a player wakes the other (measured untraced: the releaser loses up
        # to 12 ms between its unlock and its next lock(), time that is
        # neither held nor waited; 0.5 s stolen in a 4 s run took the
        # workload's own CSP to 0.463, 3-4 s in a CI run to 0.10-0.29) takes
        # the premise away; any other miss is a failure.
        took_turns = ref >= 0.45
        check(took_turns or min(steals) >= STEAL_BREAKS_TURNS_S,
              f"{what}: the players did not take turns at the lock (the workload's own CSP {ref:.3f}) in 5 runs, "
              f"the host stealing only {min(steals):.2f} s of one: no core for each, even with a raised priority")
        if not took_turns:
            stolen_from.append(f"{what} ({min(steals):.1f}-{max(steals):.1f} s of each run)")
        if cmd[0] != PINGPONG:
            check(raised == 2, f"{what}: the players were not raised to real-time priority")
        # The kernel's working time is the players' lives alone: every
        # other thread slept (the C workload has no runtime threads).
        if cmd[0] == PINGPONG:
            procs = [p for p in final_of(reports)["processes"] if p["comm"] == "lock_pingpong"]
            check(len(procs) == 1, f"{what}: processes {final_of(reports)['processes']}")
            within(procs[0]["working_ns"], wl["alive_ns"], 0.03, f"{what}: working_ns against the players' lives")

        def csp_of(report):
            rows = [b for b in report["blockers"] if b["kind"] == kind and b["class"] == cls]
            check(len(rows) == 1, f"{what}: expected one {cls} row, got {len(rows)}")
            return rows[0]["csp"]
        # The workload's own CSP (ref): its players' time in lock() over
        # their lifetimes (both always work: hold, or wait to).
        # The first and last windows are partial (start-up, exit): left out
        # before they are looked at; the last may hold no waits at all.
        steady = [csp_of(r) for r in [r for r in reports if r["type"] == "interval"][1:-1]]
        check(len(steady) >= 2 and None not in steady, f"{what}: steady intervals {steady}")
        # At most one of the two players waits at any time.
        check(max(steady) <= 0.55, f"{what}: steady CSP {steady} above one half; the windows' "
              f"{cls} thread time and process working time, ms: {windows_ms(reports, kind, cls)}")
        # One half where they took turns perfectly; the workload's own figure
        # where the host made them miss some turns (a CI run under steal: the
        # workload 0.455, parktrace's windows 0.42-0.47, checked against 0.5).
        mid, want = sorted(steady)[len(steady) // 2], min(ref, 0.5)
        if took_turns:
            check(abs(mid - want) <= 0.05,
                  f"{what}: steady CSP {steady}, want {want:.3f} +- 0.05 (workload {ref:.3f})")
        # Whole run against the workload's own figure. parktrace can only
        # see less: a wait is the blocked part of lock(), not its spins nor a
        # preemption before the park, and the working time adds the JVM's
        # start-up (a few %) to the players' lives: when the players
        # ping-pong, most of lock() is blocked (0.85). The workload's figure
        # can pass one half, the most two players taking turns can wait
        # (at most one waits at a time): its lock() time then holds more
        # than waiting (under load a loaded run read 0.549, and parktrace
        # 0.467, 0.85 of it less 0.0001); the lower bound is taken from at
        # most one half. A JVM's working time also holds its start-up and
        # its compiler and GC threads' work, which the players' lives do not:
        # 0.80 there (a quiet CI run read 0.402 against 0.478, 0.84 of it,
        # its steady windows all within 0.50 +- 0.05).
        whole = csp_of(final_of(reports))
        floor = 0.85 if cmd[0] == PINGPONG else 0.80
        check(whole is not None and floor * min(ref, 0.5) <= whole <= 1.02 * ref,
              f"{what}: whole-run CSP {whole}, the workload's {ref:.3f} (floor {floor} of it); the windows' "
              f"{cls} thread time and process working time, ms: {windows_ms(reports, kind, cls)}; the process "
              f"(working, lived, idle) and its heaviest rows: {[process_ms(final_of(reports), b['pid']) for b in final_of(reports)['blockers'] if b['kind'] == kind and b['class'] == cls]}")
    # Every other check held against the workload's own figures; one half
    # could not be asked of a machine whose host took the turns away.
    if stolen_from:
        skip("a core for each player (a host that does not steal the CPU): the players did not take turns, "
             "the host stole " + "; ".join(stolen_from))


@test
def one_thread_alone_makes_no_rows():
    # A positive control in the same run: a second process whose two
    # threads do contend must show, so an empty report cannot pass.
    script = (f"{PINGPONG} -s 1.5 -t 1 & echo alone $!; {PINGPONG} -s 1.5 -t 2 & echo pair $!; wait")
    p = run_pt(["-f", "json", "--top", "0", "--", "sh", "-c", script], timeout=60)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()}")
    pids = dict(l.split() for l in p.stdout.splitlines() if l.startswith(("alone ", "pair ")))
    own = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{"rounds"')]
    check(len(pids) == 2 and len(own) == 2, f"the workloads did not both run: {p.stdout[-300:]}")
    check(min(w["rounds"] for w in own) > 100, f"a workload took the lock only a few times: {own}")
    rows = [b for b in final_of(json_reports(p.stdout))["blockers"] if b["class"] == "pthread_mutex"]
    alone = [b for b in rows if b["pid"] == int(pids["alone"])]
    check(not alone, f"an uncontended lock has rows: {alone}")
    pair = [b for b in rows if b["pid"] == int(pids["pair"])]
    pair_wait = max(w["lock_ns"] for w in own)
    # lock_ns is the time in pthread_mutex_lock; the blocked part of it is
    # nearly all of it (holds are 500 us sleeps, a take is under 1 us).
    check(len(pair) == 1, f"the contended pair has {len(pair)} pthread_mutex rows")
    within(pair[0]["thread_time_ns"], pair_wait, 0.10, "the pair's lock thread time")


@test
def ten_workers_csp_is_their_share_of_waiting():
    # Free Lunch's "ten workers": 10 threads each hold the lock 100 us and
    # work 400 us outside it, so each spends about half its time waiting:
    # CSP is that share (about 0.5), not 5 thread-seconds per second. The
    # workload times its own lock() calls and lives; on 2 cores the workers
    # also queue for a CPU, which both count as working time.
    wl, reports = traced([PINGPONG, "-s", "3", "-t", "10", "-h", "100", "-o", "400"])
    rows = [b for b in final_of(reports)["blockers"] if b["class"] == "pthread_mutex"]
    check(len(rows) == 1 and rows[0]["csp"] is not None, f"no one mutex row with a CSP: {rows}")
    ref = wl["lock_ns"] / wl["alive_ns"]
    check(0.3 <= ref <= 0.8, f"the workers did not wait about half their time: {wl}")
    within(rows[0]["csp"], ref, 0.05, "ten workers' CSP against their own share of time in lock()")


@test
def late_and_exited_process_keeps_its_csp():
    # The ten workers again, in a process started 3 s into the run that
    # exits 3 s before its end. Started late: its threads count as alive
    # from their own start, not the run's (as if alive since then, 33
    # thread-seconds more, its CSP fell to a third). Exited: its totals are
    # frozen once it is gone and the kernel's entry for it is let go (a day
    # of new processes filled that table, and CSP stopped for every process
    # after the 8 192nd), and its recycled join waits stay idle time.
    wl, reports = traced(["sh", "-c", f"sleep 3; {PINGPONG} -s 2 -t 10 -h 100 -o 400; sleep 3"])
    rows = [b for b in final_of(reports)["blockers"] if b["class"] == "pthread_mutex" and b["pid"] == wl["pid"]]
    check(len(rows) == 1 and rows[0]["csp"] is not None, f"no one mutex row with a CSP for the process: {rows}")
    within(rows[0]["csp"], wl["lock_ns"] / wl["alive_ns"], 0.05, "the late, exited workers' CSP against their share")


@test
def killed_process_keeps_its_threads_lives():
    """A process killed while its threads wait (SIGKILL, as a container's
    stop ends one) stays a zombie until it is reaped, its leader still
    listed in /proc; killed with its parent, until init reaps it. Seen
    first as a zombie, it was counted as one thread alive and its dead
    threads' lives were lost: 8 workers' 327 ms of waits against 59 ms
    lived. Three runs: the mutex workload, under a shell, both killed once
    its nine threads run, before parktrace's first report; parktrace ends
    with them, and every report holds its invariants (harness.invariants:
    no process waits longer than its threads lived), the waits counted."""
    for run in range(3):
        p = subprocess.Popen(pt_cmd(["-i", "500ms", "-f", "json", "--top", "0", "--", "sh", "-c",
                                     f"{MC} -t 8 -m 2 -s 2 -l 2; true"]),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wl = child_of(child_of(p.pid))
            wait_threads(wl, 9)
            # Its workers wait, not only exist: a CI run killed it 0.3 s
            # in, before any wait, and found no waits (the premise's miss).
            wait_futex_sleepers(wl)
            time.sleep(0.02 * run)
            kill_descendants(p.pid)
            out, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        check(p.returncode == 0, f"run {run}: parktrace exited {p.returncode}: {err.strip()[-300:]}")
        procs = [q for q in final_of(json_reports(out))["processes"] if q["pid"] == wl]
        check(procs and procs[0]["thread_time_ns"] > 0, f"run {run}: the killed workload's waits were not counted: {procs}")


@test
def fork_join_csp_follows_the_parallel_work():
    # Free Lunch's Fig. 3: a master and 4 workers, one monitor, wait/notifyAll;
    # each worker merges its result under the monitor (a fixed 200 us). The
    # workload times its own join waits and its Object.wait (idle) time, so
    # its CSP is join_wait / (alive - idle). parktrace sees less: HotSpot
    # spins before a monitor blocks (up to ~15% of short entry waits), and
    # its working time adds the JVM's start-up (a few % of 3 s x 5 threads).
    # The workers' re-entries into the monitor after Object.wait are part of
    # the wait for both (jvm-wait rows, idle), as the workload times them.
    csps = []
    for work_us in ("4000", "1000", "250"):
        wl, reports = traced(java("ForkJoinCycle", "3", work_us))
        final = final_of(reports)
        rows = [b for b in final["blockers"] if b["kind"] == "jvm-monitor" and b["class"] == "ForkJoinCycle$Board"]
        check(len(rows) == 1 and rows[0]["csp"] is not None, f"work {work_us} us: no monitor row with a CSP: {rows}")
        csp = rows[0]["csp"]
        ref = wl["join_wait_ns"] / (wl["alive_ns"] - wl["idle_ns"])
        check(0.75 * ref <= csp <= 1.02 * ref + 0.005, f"work {work_us} us: CSP {csp}, the workload's {ref:.4f}")
        csps.append((csp, ref))
    # parktrace's CSPs rank the three runs as the workload's own do. Less
    # work per cycle usually means more pressure, but not on every run of a
    # loaded 2-CPU machine (CI, 2026-11-28: the workload's own CSP at 250 us
    # was half that at 1000 us): the order is the workload's, not assumed.
    by_pt = sorted(range(3), key=lambda i: csps[i][0])
    by_wl = sorted(range(3), key=lambda i: csps[i][1])
    check(by_pt == by_wl or min(abs(csps[i][1] - csps[j][1]) for i in range(3) for j in range(i)) < 0.01,
          f"parktrace's CSPs {[c for c, _ in csps]} do not rank the runs as the workload's "
          f"{[round(r, 4) for _, r in csps]} do")
    check(csps[0][1] < csps[2][1], f"the workload's CSP did not rise from 4000 us to 250 us of work: "
          f"{[round(r, 4) for _, r in csps]}")


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
    intervals = [r for r in reports if r["type"] == "interval"]

    def lock_row(r):
        rows = [b for b in r["blockers"] if b["class"] == lock and b["csp"] is not None]
        return rows[0] if rows else None
    # The phase's peak and mean are those of the interval reports it spans.
    inside = [lock_row(r) for r in intervals if start < wall(r["time"]) <= end + 0.01]
    check(inside and None not in inside, f"the phase's intervals have no lock row: {inside}")
    inside = [b["csp"] for b in inside]
    check(abs(p["peak_csp"] - max(inside)) <= 1e-3 and abs(p["mean_csp"] - sum(inside) / len(inside)) <= 1e-3,
          f"phase peak {p['peak_csp']} mean {p['mean_csp']}, its intervals' CSPs {inside}")
    # The stretch's CSP as the workload timed it: its threads' time in lock()
    # over their working time (the stretch less their sleeps), against the
    # intervals wholly inside it, taken together: they cover two thirds of
    # the stretch, and one interval differs from another by up to 15% on a
    # busy machine (as its threads get a core or not).
    ref = wl["contended_wait_ns"] / (4 * (true_to - true_from) * 1e9 - wl["contended_idle_ns"])
    whole = [lock_row(r) for r in intervals
             if true_from <= wall(r["time"]) - r["window_ns"] / 1e9 and wall(r["time"]) <= true_to]
    check(len(whole) >= 1 and None not in whole, f"no interval wholly inside the stretch has a lock row: {whole}")
    waited = sum(b["thread_time_ns"] for b in whole)
    within(waited / sum(b["thread_time_ns"] / b["csp"] for b in whole), ref, 0.15,
           "CSP of the intervals inside the stretch")
    check(len(intervals) >= 8, f"only {len(intervals)} interval reports")


if __name__ == "__main__":
    main()
