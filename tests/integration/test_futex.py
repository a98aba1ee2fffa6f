#!/usr/bin/python3
"""Integration tests: the real parktrace under real BPF against real
pthread workloads, checked against what the workloads measured themselves."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

# Four workers per mutex keep a queue on each lock, so every hold has a
# waiter and the thesis's hold estimate applies.
def run_workload_traced(extra_pt=(), wl_args=("-t", "8", "-m", "2", "-s", "3")):
    report = os.path.join(TMP, "wl.json")
    p = run_pt(["-f", "json", "--top", "0", *extra_pt, "--", MC, *wl_args, "-r", report])
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()}")
    with open(report) as f:
        wl = json.load(f)
    return wl, json_reports(p.stdout), p


@test
def mutex_times_and_parks_match_workload():
    wl, reports, _ = run_workload_traced()
    final = final_of(reports)
    rows = [b for b in final["blockers"] if b["pid"] == wl["pid"]]
    for m in wl["mutexes"]:
        mine = [b for b in rows if b["name"] == m["name"]]
        check(len(mine) == 1, f"{m['name']}: expected one row, got {len(mine)}")
        b = mine[0]
        check(b["id"] == m["addr"], f"{m['name']}: id {b['id']} is not the mutex address {m['addr']}")
        check(b["class"] == "pthread_mutex", f"{m['name']}: class {b['class']}")
        check(b["role"] == "lock", f"{m['name']}: role {b['role']}")
        within(b["thread_time_ns"], m["blocked_ns"], 0.05, f"{m['name']} thread_time_ns")
        within(b["parks"], m["blocked"], 0.05, f"{m['name']} parks")
        check(1 <= b["peak_parked"] <= wl["threads"], f"{m['name']}: peak_parked {b['peak_parked']}")
        check(b["max_park_ns"] >= b["avg_park_ns"] > 0, f"{m['name']}: max < avg")
        # Each lock is held for its preset time while others wait: the
        # thesis's hold estimate must recover it.
        within(b["avg_hold_ns"], m["hold_ns"], 0.15, f"{m['name']} avg_hold_ns")
        check(sum(h[2] for h in b["hist_ns"]) == b["parks"] - b["parked_now"],
              f"{m['name']}: histogram does not count every completed wait")
        check("worker" in b["first_stack"] and b["top_frame"] == "worker",
              f"{m['name']}: waiter stack lacks the workload's worker(): {b['first_stack']}")


@test
def condvar_is_a_wait_role_blocker():
    wl, reports, _ = run_workload_traced()
    final = final_of(reports)
    rows = [b for b in final["blockers"] if b["pid"] == wl["pid"] and b["name"] == wl["cond"]["name"]]
    check(rows, "no row for the condition variable queue_nonempty")
    for b in rows:
        check(b["class"] == "pthread_cond", f"condvar class {b['class']}")
        check(b["role"] == "wait", f"condvar role {b['role']}")
    within(sum(b["thread_time_ns"] for b in rows), wl["cond"]["wait_ns"], 0.05, "condvar wait time")


@test
def pid_filter_isolates_processes():
    a = subprocess.Popen([MC, "-s", "5", "-r", os.path.join(TMP, "a.json")])
    b = subprocess.Popen([MC, "-s", "5", "-r", os.path.join(TMP, "b.json")])
    try:
        time.sleep(0.3)
        p = run_pt(["-p", str(a.pid), "-d", "2", "-f", "json", "--top", "0"])
        check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
        final = final_of(json_reports(p.stdout))
        pids = {r["pid"] for r in final["blockers"]}
        check(pids == {a.pid}, f"rows from pids {pids}, expected only {a.pid} (not {b.pid})")
    finally:
        a.wait()
        b.wait()


@test
def interval_windows_add_up_to_final():
    report = os.path.join(TMP, "iv.json")
    p = run_pt(["-i", "1s", "-d", "4", "-f", "json", "--top", "0", "--", MC, "-s", "6", "-r", report],
               timeout=30)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    reports = json_reports(p.stdout)
    intervals = [r for r in reports if r["type"] == "interval"]
    check(len(intervals) >= 3, f"only {len(intervals)} interval reports")
    for r in intervals[:3]:
        check(0.9e9 <= r["window_ns"] <= 1.3e9, f"interval window {r['window_ns']} ns is not ~1s")
    final = final_of(reports)
    total = lambda r: sum(b["thread_time_ns"] for b in r["blockers"])
    within(sum(total(r) for r in intervals), total(final), 0.05, "sum of interval thread_time_ns")
    # A window never shows 0 for a lock threads are stuck on.
    for r in intervals[:3]:
        check(total(r) > 0, "an interval with contention reported no thread time")


@test
def collapsed_stacks_render_with_flamegraph():
    for value in ("time", "count"):
        folded = os.path.join(TMP, f"stacks-{value}.txt")
        svg = os.path.join(TMP, f"stacks-{value}.svg")
        wl, reports, _ = run_workload_traced(("--collapsed", folded, "--collapsed-value", value),
                                             ("-s", "2"))
        lines = open(folded).read().splitlines()
        check(lines, "collapsed output is empty")
        for line in lines:
            frames, _, n = line.rpartition(" ")
            check(n.isdigit() and int(n) > 0, f"bad value in {line!r}")
            parts = frames.split(";")
            check(parts[0] == "mutex_contentio", f"root frame is not the process: {parts[0]}")
            check(parts[-1].startswith("[") and parts[-1].endswith("]"), f"leaf is not a class: {parts[-1]}")
        mutex_lines = [l for l in lines if l.rpartition(" ")[0].endswith(";pthread_mutex_lock;__lll_lock_wait;[pthread_mutex]")]
        check(any(";worker;" in l for l in mutex_lines), "no mutex stack through worker()")
        if value == "count":
            final = final_of(reports)
            parks = sum(b["parks"] - b["parked_now"] for b in final["blockers"])
            counted = sum(int(l.rpartition(" ")[2]) for l in lines)
            check(counted == parks, f"collapsed counts {counted} != completed waits {parks}")
        with open(svg, "w") as out:
            r = subprocess.run(["perl", FLAMEGRAPH, folded], stdout=out, stderr=subprocess.PIPE, text=True)
        check(r.returncode == 0, f"flamegraph.pl failed: {r.stderr}")
        body = open(svg).read()
        check(body.startswith("<?xml") and "<svg" in body and "worker" in body, "SVG lacks the worker frame")


@test
def sigusr1_dumps_without_stopping():
    out = os.path.join(TMP, "dump.json")
    p = subprocess.Popen([PT, "-f", "json", "-o", out, "--", MC, "-s", "3", "-r", os.path.join(TMP, "d.json")])
    time.sleep(1.5)
    p.send_signal(signal.SIGUSR1)
    rc = p.wait(timeout=30)
    check(rc == 0, f"exit {rc}")
    types = [r["type"] for r in json_reports(open(out).read())]
    check(types == ["dump", "final"], f"report types {types}")


@test
def threshold_options():
    _, reports, _ = run_workload_traced(("--print-threshold", "100000000"), ("-s", "1"))
    final = final_of(reports)
    check(final["blockers"] == [] and final["totals"]["waits"] > 0,
          "--print-threshold must hide rows but keep totals")
    _, reports, _ = run_workload_traced(("--top", "1"), ("-s", "1"))
    check(len(final_of(reports)["blockers"]) == 1, "--top 1 must give one row")
    # --threshold 100: a blocker is timed from its 100th wait on, but every
    # wait is still counted.
    wl, reports, _ = run_workload_traced(("--threshold", "100"), ("-t", "8", "-m", "2", "-s", "2"))
    final = final_of(reports)
    for m in wl["mutexes"]:
        b = [b for b in final["blockers"] if b["pid"] == wl["pid"] and b["name"] == m["name"]][0]
        within(b["parks"], m["blocked"], 0.05, f"{m['name']} parks with --threshold")
        untimed = m["blocked_ns"] * 100 / m["blocked"]
        within(b["thread_time_ns"], m["blocked_ns"] - untimed, 0.10, f"{m['name']} timed part with --threshold")


@test
def text_report_has_the_contract_columns():
    p = run_pt(["--", MC, "-s", "1", "-r", os.path.join(TMP, "t.json")])
    check(p.returncode == 0, p.stderr)
    lines = p.stdout.splitlines()
    check(lines[0].startswith("parktrace final report: window"), f"header: {lines[0]}")
    for col in ("KIND", "PID", "CLASS", "ID", "PARKS", "PEAK", "THREAD-TIME", "REAL-TIME", "AVG-PARK",
                "AVG-HOLD", "REAL%", "THREAD%", "CSP", "TOP-FRAME", "CAUSED-BY"):
        check(col in lines[1], f"column {col} missing")
    check(any("cache_lock" in l and "pthread_mutex" in l for l in lines[2:]), "no cache_lock row")
    # The waiters of a worker mutex were woken by worker()'s unlock.
    check(any("cache_lock" in l and l.split()[-1] == "worker" for l in lines[2:]),
          "CAUSED-BY does not name worker() for cache_lock")


def error_case(args, want_rc, want_text, env=None, user=None):
    cmd = [PT] + args
    if user:
        cmd = ["setpriv", "--reuid", str(user), "--regid", str(user), "--clear-groups"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=20, env=env)
    check(p.returncode == want_rc, f"{args}: exit {p.returncode}, wanted {want_rc}; stderr {p.stderr!r}")
    first = p.stderr.splitlines()[0] if p.stderr else ""
    check(first.startswith("parktrace: ") and want_text in first, f"{args}: message {first!r}")
    check("Segmentation" not in p.stderr and p.returncode >= 0, "crashed")
    return p


@test
def errors_are_one_line():
    p = error_case(["-d", "1"], 2, "root", user=65534)
    check(len(p.stderr.strip().splitlines()) == 1, "privilege error is not one line")
    env = dict(os.environ, PARKTRACE_BTF_PATH="/nonexistent/vmlinux")
    p = error_case(["-d", "1"], 2, "BTF", env=env)
    check(len(p.stderr.strip().splitlines()) == 1, "BTF error is not one line")
    error_case(["-p", "2147480000"], 2, "no process with PID 2147480000")
    error_case(["-d", "1x"], 1, "invalid duration '1x'")
    error_case(["-i", "-5s"], 1, "invalid interval")
    error_case(["--bogus"], 1, "unknown option '--bogus'")
    error_case(["-p", "abc"], 1, "invalid PID 'abc'")
    error_case(["--format", "xml"], 1, "invalid format")
    error_case(["-o", "/nonexistent-dir/x", "-d", "1"], 2, "cannot write /nonexistent-dir/x")


@test
def traced_pid_exit_is_reported_not_an_error():
    s = subprocess.Popen(["sleep", "1"])
    t0 = time.time()
    p = run_pt(["-p", str(s.pid), "-d", "20"])
    s.wait()
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    check(f"process {s.pid} exited" in p.stderr, f"exit not reported: {p.stderr!r}")
    check(time.time() - t0 < 10, "parktrace kept running after its only process exited")
    check("final report" in p.stdout, "no final report")


def bpf_state():
    progs = subprocess.run(["bpftool", "prog", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["bpftool", "link", "list"], capture_output=True, text=True).stdout
    maps = subprocess.run(["bpftool", "map", "list"], capture_output=True, text=True).stdout
    ids = lambda text: sorted(l.split(":")[0] for l in text.splitlines() if l and l[0].isdigit())
    return ids(progs), ids(links), ids(maps)


@test
def signals_detach_every_probe():
    for sig in (signal.SIGINT, signal.SIGTERM):
        before = bpf_state()
        p = subprocess.Popen([PT, "-f", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 15
        while bpf_state()[0] == before[0] and time.time() < deadline:
            time.sleep(0.1)
        check(bpf_state()[0] != before[0], "parktrace never loaded its programs")
        time.sleep(0.5)
        p.send_signal(sig)
        out, err = p.communicate(timeout=20)
        check(p.returncode == 0, f"{sig.name}: exit {p.returncode}: {err}")
        check('"type":"final"' in out, f"{sig.name}: no final report")
        # The kernel frees closed maps from a work queue: give it a moment.
        new = lambda: [set(a) - set(b) for a, b in zip(bpf_state(), before)]
        deadline = time.time() + 10
        while any(new()) and time.time() < deadline:
            time.sleep(0.2)
        check(not any(new()), f"{sig.name}: left behind progs/links/maps {new()}")


@test
def system_wide_sees_the_workload():
    wl_report = os.path.join(TMP, "sw.json")
    w = subprocess.Popen([MC, "-s", "3", "-r", wl_report])
    p = run_pt(["-d", "2", "-f", "json", "--top", "0"])
    w.wait()
    check(p.returncode == 0, p.stderr)
    final = final_of(json_reports(p.stdout))
    names = {b["name"] for b in final["blockers"] if b["pid"] == w.pid}
    check("cache_lock" in names, f"system-wide trace missed the workload's cache_lock: {names}")
    check(all(b["pid"] != p.args and b["comm"] != "parktrace" for b in final["blockers"]),
          "parktrace traced itself")


@test
def shared_futex_is_one_blocker_across_processes():
    # The workload forks: this also checks that -- COMMAND follows children.
    report = os.path.join(TMP, "shm.json")
    p = run_pt(["-f", "json", "--top", "0", "--", SHM, "-s", "3", "-r", report])
    check(p.returncode == 0, p.stderr)
    wl = json.load(open(report))
    final = final_of(json_reports(p.stdout))
    rows = [b for b in final["blockers"] if b["pid"] in wl["pids"] and b["class"] == "pthread_mutex"]
    check(len(rows) == 1, f"expected one shared mutex row, got {len(rows)}: {[(b['pid'], b['id']) for b in rows]}")
    within(rows[0]["parks"], wl["blocked"], 0.05, "shared mutex parks (both processes)")
    within(rows[0]["thread_time_ns"], wl["blocked_ns"], 0.05, "shared mutex thread time")
    check(rows[0]["threads"] == 2, f"threads {rows[0]['threads']}, want one from each process")


@test
def live_view_redraws_on_a_terminal():
    out = run_on_terminal([PT, "-i", "300ms", "--", MC, "-s", "1.2", "-r", os.path.join(TMP, "live.json")])
    out = out.decode(errors="replace")
    check(out.count("\033[H\033[J") >= 3, "no in-place redraws on a terminal")
    check("final report" in out, "no final report on the terminal")
    # Not on a terminal: the same reports are appended, without escapes.
    q = run_pt(["-i", "300ms", "--", MC, "-s", "1", "-r", os.path.join(TMP, "live2.json")])
    check("\033[" not in q.stdout and q.stdout.count("interval report") >= 3, "piped output must append")


@test
def full_blocker_table_is_counted_not_silent():
    # Each workload has 5 to 9 blockers, and they finish inside the trace.
    procs = [subprocess.Popen([MC, "-m", "3", "-s", "1.5", "-r", os.path.join(TMP, f"full{i}.json")])
             for i in range(4)]
    try:
        p = run_pt(["--max-blockers", "16", "-d", "3"])
    finally:
        for w in procs:
            w.wait()
    check(p.returncode == 0, p.stderr)
    m = re.search(r"dropped_events (\d+)", p.stdout)
    check(m and int(m.group(1)) > 0, f"a 16-slot table with 4 workloads must drop: {p.stdout.splitlines()[0]}")


@test
def wait_endings_are_measured_in_both_probe_modes():
    for probes in ("sched", "syscalls"):
        report = os.path.join(TMP, f"tw-{probes}.json")
        p = run_pt(["-f", "json", "--top", "0", "--probes", probes, "--", TW, "-t", "20", "-w", "30", "-r", report])
        check(p.returncode == 0, f"{probes}: {p.stderr}")
        wl = json.load(open(report))
        final = final_of(json_reports(p.stdout))
        conds = [b for b in final["blockers"] if b["pid"] == wl["pid"] and b["class"] == "pthread_cond"]
        timeouts = sum(b["timeouts"] for b in conds)
        wakeups = sum(b["wakeups"] for b in conds)
        check(timeouts == wl["timeouts"], f"{probes}: {timeouts} timeouts, workload timed out {wl['timeouts']} times")
        check(wakeups == wl["wakeups"], f"{probes}: {wakeups} wakeups, workload was woken {wl['wakeups']} times")
        check(all(b["role"] == "wait" for b in conds), f"{probes}: condvar role")


@test
def syscalls_probe_mode_matches_workload():
    wl, reports, _ = run_workload_traced(("--probes", "syscalls"))
    final = final_of(reports)
    for m in wl["mutexes"]:
        b = [b for b in final["blockers"] if b["pid"] == wl["pid"] and b["name"] == m["name"]][0]
        within(b["thread_time_ns"], m["blocked_ns"], 0.05, f"syscalls mode {m['name']} thread_time_ns")
        within(b["parks"], m["blocked"], 0.05, f"syscalls mode {m['name']} parks")
        check("worker" in b["first_stack"], f"syscalls mode {m['name']}: stack {b['first_stack']}")


# The JSON Lines contract of spec/cli.md, field for field.
REPORT_KEYS = {"type", "time", "window_ns", "totals", "blockers", "phases"}
TOTALS_KEYS = {"waits", "blockers", "dropped_events", "dropped_stacks", "stacks", "truncated_stacks"}
BLOCKER_KEYS = {"kind", "pid", "comm", "id", "name", "class", "role", "parks", "wakeups", "timeouts",
                "parked_now", "peak_parked", "thread_time_ns", "real_time_ns", "avg_park_ns", "max_park_ns",
                "avg_hold_ns", "real_util", "thread_util", "real_life_util", "thread_life_util", "threads",
                "csp", "hist_ns", "first_thread", "first_stack", "top_frame",
                "top_waker", "fast_parks"}  # parktrace's extensions of the contract


@test
def json_lines_follow_the_contract():
    p = run_pt(["-f", "json", "-i", "500ms", "--", MC, "-s", "1.2", "-r", os.path.join(TMP, "c.json")])
    check(p.returncode == 0, p.stderr)
    reports = [json.loads(l) for l in p.stdout.splitlines()]
    check(reports and all(r["type"] in ("interval", "final") for r in reports), "a line is not a report")
    for r in reports:
        check(set(r) == REPORT_KEYS, f"report keys {sorted(set(r) ^ REPORT_KEYS)}")
        check(set(r["totals"]) == TOTALS_KEYS, f"totals keys {sorted(set(r['totals']) ^ TOTALS_KEYS)}")
        check(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", r["time"]), f"time {r['time']}")
        for b in r["blockers"]:
            check(set(b) == BLOCKER_KEYS, f"blocker keys {sorted(set(b) ^ BLOCKER_KEYS)}")
            check(b["kind"] == "futex" and b["role"] in ("lock", "wait"), f"kind/role {b['kind']}/{b['role']}")
            check(re.match(r"0x[0-9a-f]+$", b["id"]), f"id {b['id']}")
            check(all(len(h) == 3 and h[0] < h[1] for h in b["hist_ns"]), "hist_ns entries are [lo,hi,count]")
    check(reports[-1]["type"] == "final", "the last report is not the final one")


@test
def grouping_by_class_and_site_conserves_totals():
    for by in ("class", "site"):
        wl, reports, _ = run_workload_traced(("--by", by), ("-t", "8", "-m", "2", "-s", "2"))
        final = final_of(reports)
        check(sum(b["parks"] for b in final["blockers"]) == final["totals"]["waits"],
              f"--by {by}: grouped rows lose or invent waits")
        keys = [(b["pid"], b["kind"], b["class"] if by == "class" else b["top_frame"]) for b in final["blockers"]]
        check(len(keys) == len(set(keys)), f"--by {by}: a group appears twice")
        mine = [b for b in final["blockers"] if b["pid"] == wl["pid"]]
        group = [b for b in mine if (b["class"] if by == "class" else b["top_frame"]) ==
                 ("pthread_mutex" if by == "class" else "worker")]
        check(len(group) == 1, f"--by {by}: no single mutex group: {[(b['class'], b['top_frame']) for b in mine]}")
        blocked = sum(m["blocked"] for m in wl["mutexes"])
        blocked_ns = sum(m["blocked_ns"] for m in wl["mutexes"])
        # The workers' mutexes, plus (by class) the condvar's mutex re-locks.
        check(0.95 * blocked <= group[0]["parks"] <= 1.05 * blocked + 50,
              f"--by {by}: {group[0]['parks']} parks, the workload blocked {blocked} times")
        within(group[0]["thread_time_ns"], blocked_ns, 0.05, f"--by {by} group thread time")


@test
def waker_stacks_show_who_caused_the_wait():
    folded = os.path.join(TMP, "waker.txt")
    wl, reports, _ = run_workload_traced(("--waker", "--collapsed", folded, "--collapsed-value", "count"),
                                         ("-t", "8", "-m", "2", "-s", "2"))
    final = final_of(reports)
    for m in wl["mutexes"]:
        b = [b for b in final["blockers"] if b["name"] == m["name"]][0]
        w = b["top_waker"]
        check(w is not None, f"{m['name']}: no waker recorded")
        # Every wait on a mutex is ended by an unlock in worker().
        check(any("mutex_unlock" in f for f in w["stack"]) and w["top_frame"] == "worker",
              f"{m['name']}: waker stack is not worker's unlock: {w['stack']}")
        check(b["wakeups"] >= 0.95 * (b["parks"] - b["parked_now"]), f"{m['name']}: wakeups {b['wakeups']}")
        check(w["wakeups"] >= 0.9 * b["wakeups"], f"{m['name']}: top waker has {w['wakeups']} of {b['wakeups']}")
    cond = [b for b in final["blockers"] if b["pid"] == wl["pid"] and b["class"] == "pthread_cond"]
    check(cond and cond[0]["top_waker"] and cond[0]["top_waker"]["top_frame"] == "producer",
          f"the condvar's waker is not producer(): {cond and cond[0]['top_waker']}")
    lines = open(folded).read().splitlines()
    woke = [l for l in lines if ";--;" in l]
    check(any(l.rpartition(" ")[0].split(";--;")[1].startswith(("__", "pthread", "lll")) and ";worker;" in
              l.split(";--;")[1] for l in woke), "no --waker line ends in worker()'s unlock")
    check(all(l.rpartition(" ")[0].endswith(";mutex_contentio") for l in woke),
          "a waker line does not end with the waker's process")
    counted = sum(int(l.rpartition(" ")[2]) for l in lines)
    parks = sum(b["parks"] - b["parked_now"] for b in final["blockers"])
    check(counted == parks, f"--waker lines count {counted} waits, {parks} completed")


if __name__ == "__main__":
    main()
