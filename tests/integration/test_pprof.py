#!/usr/bin/python3
"""--pprof FILE (docs/contract/cli.md, "pprof"): a gzip-compressed pprof contention
profile written at exit, read back with Go's own `go tool pprof` and held
against the JSON report of the same run and the workload's own timing."""
import collections
import json
import os
import re
import subprocess

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

GO = "/usr/bin/go"
SAMPLE = re.compile(r"^\s+(\d+)\s+(\d+):((?:\s+\d+)*)\s*$")
LABEL = re.compile(r"(\w+):\[([^\]]*)\]")


def go_pprof(*args):
    """`go tool pprof ARGS`, its caches in this file's TMP."""
    env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"), PPROF_TMPDIR=TMP)
    return subprocess.run([GO, "tool", "pprof", *args], capture_output=True, text=True, timeout=120, env=env)


def parse_raw(text):
    """`-raw` output: the header lines, and the samples as (count, ns,
    number of locations, labels)."""
    head, samples, cur = [], [], None
    in_samples = False
    for line in text.splitlines():
        if line.startswith("Samples:"):
            in_samples = True
            continue
        if not in_samples:
            head.append(line)
            continue
        if line.startswith("Locations") or line.startswith("Mappings"):
            break
        m = SAMPLE.match(line)
        if m:
            cur = [int(m.group(1)), int(m.group(2)), len(m.group(3).split()), {}]
            samples.append(cur)
        elif cur is not None:
            cur[3].update(LABEL.findall(line))
    return head, samples


def traced_run(wl_args=("-t", "8", "-m", "2", "-s", "3")):
    """parktrace --pprof over mutex_contention: the workload's report,
    parktrace's final JSON report, the profile's path."""
    prof, report = os.path.join(TMP, "waits.pb.gz"), os.path.join(TMP, "wl.json")
    p = run_pt(["-f", "json", "--top", "0", "--pprof", prof, "--", MC, *wl_args, "-r", report])
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()}")
    check(os.path.exists(prof), "no profile written")
    return json.load(open(report)), final_of(json_reports(p.stdout)), prof


@test
def pprof_totals_match_json_and_workload():
    wl, final, prof = traced_run()
    with open(prof, "rb") as f:
        check(f.read(2) == b"\x1f\x8b", "the profile is not gzip-compressed")
    r = go_pprof("-raw", prof)
    check(r.returncode == 0, f"go tool pprof -raw failed: {r.stderr.strip()[-300:]}")
    head, samples = parse_raw(r.stdout)
    check("PeriodType: contentions count" in head, f"period type: {head}")
    check(samples, "no samples")
    types = r.stdout.split("Samples:", 1)[1].splitlines()[1].split()
    check(types == ["contentions/count", "delay/nanoseconds"], f"sample types {types}")
    for s in samples:
        # The workload runs in no container: its cgroup, and no container
        # label; a mutex's waits end up somewhere (chain_end).
        check(set(s[3]) - {"chain_end"} == {"kind", "class", "role", "blocker", "comm", "pid", "cgroup"},
              f"labels {s[3]}")
        check(s[3].get("chain_end", "running") in ("running", "runnable", "sleeping", "io", "cycle", "unknown"),
              f"chain_end {s[3]}")
        check(s[0] > 0 and s[2] >= 2, f"empty sample {s}")
    mine = [b for b in final["blockers"] if b["pid"] == wl["pid"]]
    # Totals: every completed wait, as the collapsed output counts them.
    count = sum(s[0] for s in samples)
    parks = sum(b["parks"] - b["parked_now"] for b in mine)
    check(count == parks, f"pprof contentions {count} != completed waits {parks} in the JSON report")
    within(sum(s[1] for s in samples), sum(b["thread_time_ns"] for b in mine), 0.02, "pprof delay", "JSON report")
    # Per class label.
    by_class = collections.Counter()
    for s in samples:
        by_class[s[3]["class"]] += s[1]
    json_class = collections.Counter()
    for b in mine:
        json_class[b["class"]] += b["thread_time_ns"]
    for cls in ("pthread_mutex", "pthread_cond"):
        within(by_class[cls], json_class[cls], 0.02, f"pprof delay of class {cls}", "JSON report")
    # Per blocker label, against the workload's own clock.
    for m in wl["mutexes"]:
        ss = [s for s in samples if s[3]["blocker"] == m["name"]]
        check(ss and all(s[3]["class"] == "pthread_mutex" and s[3]["role"] == "lock" and
                         s[3]["kind"] == "futex" and s[3]["pid"] == str(wl["pid"]) and
                         s[3]["comm"] == "mutex_contentio" for s in ss), f"{m['name']}: labels {ss}")
        within(sum(s[1] for s in ss), m["blocked_ns"], 0.05, f"{m['name']} pprof delay")
        check(any("chain_end" in s[3] for s in ss), f"{m['name']}: no chain_end label on a mutex's waits: {ss}")
    cond = [s for s in samples if s[3]["blocker"] == wl["cond"]["name"]]
    check(cond and all(s[3]["role"] == "wait" for s in cond), f"condition variable samples {cond}")
    within(sum(s[1] for s in cond), wl["cond"]["wait_ns"], 0.05, "queue_nonempty pprof delay")


@test
def pprof_samples_carry_their_chain_end():
    """A fleet asks where waiting ends: the worker's waits on a mutex whose
    holder waits behind a writer in fsync carry chain_end io
    (tools/workloads/chain_locks.c -m io)."""
    prof = os.path.join(TMP, "chains.pb.gz")
    p = run_pt(["-f", "json", "--pprof", prof, "--", os.path.join(BUILD, "workloads", "chain_locks"), "-m", "io",
                "-n", "8", "-h", "60", "-d", TMP])
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-300:]}")
    r = go_pprof("-raw", prof)
    check(r.returncode == 0, f"go tool pprof -raw failed: {r.stderr.strip()[-300:]}")
    _, samples = parse_raw(r.stdout)
    ends = collections.Counter()
    for s in samples:
        ends[s[3].get("chain_end", "-")] += s[1]
    check(ends["io"] > 0 and ends["io"] >= 0.3 * sum(ends.values()),
          f"the waits' time by chain_end: {dict(ends)} (the worker and the flusher wait on the writer's fsync)")


@test
def pprof_top_and_traces_read_it():
    _, _, prof = traced_run(("-t", "4", "-m", "1", "-s", "1"))
    top = go_pprof("-top", "-sample_index=delay", prof)
    check(top.returncode == 0, f"go tool pprof -top failed: {top.stderr.strip()[-300:]}")
    check("[pthread_mutex]" in top.stdout, f"no class leaf in -top:\n{top.stdout}")
    tr = go_pprof("-traces", prof)
    check(tr.returncode == 0, f"go tool pprof -traces failed: {tr.stderr.strip()[-300:]}")
    # Leaf first, then the frames, then the process, as collapsed but reversed.
    traces = [[l.strip() for l in m.group(1).splitlines()]
              for m in re.finditer(r"\[pthread_mutex\]\n((?:\s+\S.*\n)+)", tr.stdout)]
    check(traces, f"no [pthread_mutex] trace:\n{tr.stdout[:2000]}")
    check(all(t[-1] == "mutex_contentio" for t in traces), f"a trace does not end in the process: {traces}")
    check(any(t[:3] == ["__lll_lock_wait", "pthread_mutex_lock", "worker"] for t in traces),
          f"no trace of worker()'s pthread_mutex_lock: {traces}")


@test
def pprof_bad_file_is_one_line():
    for path, status in (("/nonexistent/dir/p.pb.gz", 2), ("/dev/full", 2), ("--x", 1)):
        p = run_pt(["--pprof", path, "--", "true"])
        lines = p.stderr.strip().splitlines()
        check(p.returncode == status and len(lines) == 1 and lines[0].startswith("parktrace: "),
              f"--pprof {path}: exit {p.returncode}, stderr {p.stderr!r}")
        check(not os.path.exists("/nonexistent/dir"), "created a directory")


if __name__ == "__main__":
    main()
