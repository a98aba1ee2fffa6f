#!/usr/bin/python3
"""What each part of parktrace costs on an embedded database (issue 42):
the database's load under parktrace -p with --self-stats, in interleaved
rounds of variants that each leave one part of the work out, by the
options a user has. Prints a markdown table of medians for BENCHMARKS.md.

usage: python3 tools/bench/db_ablation.py [DATABASE] [ROUNDS] [SECONDS]   (root)
DATABASE: h2 (default), derby or hsqldb, from tools/servers/."""
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# (name, parktrace options beyond -d and --self-stats, what it leaves out)
VARIANTS = [
    ("defaults", [], "nothing"),
    ("--kinds futex", ["--kinds", "futex"],
     "Java keys: each thread's waits keyed by its own futex, so no blocker is new"),
    ("--stack-budget 0.01", ["--stack-budget", "0.01"], "nearly every stack"),
    ("--kinds futex --stack-budget 0.01", ["--kinds", "futex", "--stack-budget", "0.01"], "both"),
    ("--chains 0", ["--chains", "0"], "wait chains"),
    ("--kinds futex --stack-budget 0.01 --chains 0", ["--kinds", "futex", "--stack-budget", "0.01", "--chains", "0"],
     "all three"),
]
# DB_VARIANTS="defaults,--chains 0": only these, by name.
if os.environ.get("DB_VARIANTS"):
    WANTED = os.environ["DB_VARIANTS"].split(",")
    VARIANTS = [v for v in VARIANTS if v[0] in WANTED]
# Variants run by another build's parktrace, by name (the others: this build's).
BINARIES = {}
# DB_BASELINE=PATH: the defaults of another build (PATH, its parktrace) too.
if os.environ.get("DB_BASELINE"):
    BASELINE = os.environ["DB_BASELINE"]
    VARIANTS.append((f"defaults, {BASELINE}", [], "the baseline build"))
    BINARIES[VARIANTS[-1][0]] = BASELINE


def one_run(db, seconds, opts, binary=None):
    """The --self-stats figures of one load of DB under parktrace OPTS (BINARY: another build's)."""
    cmd = [sys.executable, os.path.join(ROOT, "tools", "servers", f"{db}.py"), "-s", str(seconds + 4), "-w", "2",
           "--", "-d", str(seconds), "--self-stats", "-o", "/dev/null", *opts]
    env = dict(os.environ)
    if binary:
        env["PARKTRACE_BIN"] = binary
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 300, env=env)
    out = p.stdout + p.stderr
    st = dict(re.findall(r"\b(\w+)=(\d+(?:\.\d+)?)\b", out))
    sw = re.search(r"\bsched_switch=(\d+)x(\d+)ns", out)
    wk = re.search(r"\bsched_waking=(\d+)x(\d+)ns", out)
    rate = re.findall(r"transactions_per_sec (\d+(?:\.\d+)?)", out)
    if not sw or "bpf_ns_per_run" not in st:
        raise SystemExit(f"{db} {' '.join(opts)}: no --self-stats in its output:\n{out[-1500:]}")
    return {"switch_runs": int(sw.group(1)), "switch_ns": int(sw.group(2)),
            "waking_runs": int(wk.group(1)) if wk else 0, "waking_ns": int(wk.group(2)) if wk else 0,
            "ns_per_run": int(st["bpf_ns_per_run"]), "p99": int(st.get("sched_switch_p99_ns", 0)),
            "cpu_pct": float(st.get("cpu_pct", 0)), "steady_pct": float(st.get("cpu_steady_pct", 0)),
            "bpf_pct": 100.0 * int(st["bpf_runs"]) * int(st["bpf_ns_per_run"]) / (seconds * 1e9 * os.cpu_count()),
            "walks": int(st.get("unwind_walks", 0)),
            "rate": float(rate[-1]) if rate else 0.0}


def median(runs, key):
    return statistics.median(r[key] for r in runs)


def main():
    db = sys.argv[1] if len(sys.argv) > 1 else "h2"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 10
    runs = {name: [] for name, _, _ in VARIANTS}
    for r in range(rounds):
        # Interleaved, the order turned each round: the database's own rate
        # swings from run to run.
        order = VARIANTS[r % len(VARIANTS):] + VARIANTS[:r % len(VARIANTS)]
        for name, opts, _ in order:
            runs[name].append(one_run(db, seconds, opts, BINARIES.get(name)))
            print(f"round {r + 1} {name}: {runs[name][-1]}", file=sys.stderr, flush=True)
    print(f"`python3 tools/bench/db_ablation.py {db} {rounds} {seconds:g}`, medians of {rounds} interleaved rounds:\n")
    print("| variant | leaves out | `sched_switch` runs x ns | `sched_waking` runs x ns | BPF ns a run (all) "
          "| `sched_switch` p99 ns | stacks walked | parktrace CPU % (whole life) | steady state | "
          "BPF % of the machine | transactions/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, _, what in VARIANTS:
        rs = runs[name]
        print(f"| {name} | {what} | {median(rs, 'switch_runs'):.0f} x {median(rs, 'switch_ns'):.0f} "
              f"| {median(rs, 'waking_runs'):.0f} x {median(rs, 'waking_ns'):.0f} | {median(rs, 'ns_per_run'):.0f} "
              f"| {median(rs, 'p99'):.0f} | {median(rs, 'walks'):.0f} | {median(rs, 'cpu_pct'):.2f} "
              f"| {median(rs, 'steady_pct'):.2f} | {median(rs, 'bpf_pct'):.2f} | {median(rs, 'rate'):.0f} |")


if __name__ == "__main__":
    main()
