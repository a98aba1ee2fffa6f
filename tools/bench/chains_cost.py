#!/usr/bin/python3
"""What wait chains cost (issue 43, item 4): the BPF time per event and
parktrace's CPU with chains read (--chains 10, the default) and without
(--chains 0), in interleaved runs over the same workloads, as --self-stats
and the kernel's run counters give them. Writes BENCHMARKS.md's
"chains-cost" block (between its markers) and prints it.

usage: python3 tools/bench/chains_cost.py [ROUNDS]   (root, real BPF)"""
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (put_section)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PT = os.path.join(ROOT, "build", "parktrace")
WL = os.path.join(ROOT, "build", "workloads")
WORKLOADS = {
    # Eight threads on three mutexes: every wait has a holder, most running.
    "mutex_contention -t 8 -s 5": [os.path.join(WL, "mutex_contention"), "-t", "8", "-s", "5"],
    # 20 000 short-lived mutexes, each waited on once behind a sleeping holder.
    "churn_locks -p 4 -n 20000": [os.path.join(WL, "churn_locks"), "-p", "4", "-n", "20000", "-u", "200"],
    # The bench's thread pool (issue 42's): Java parks on a queue's lock and condition.
    # (10 s: the JVM's start-up, its first parks all taking stacks and chains, is less of it.)
    "java ThreadPool -s 10 -t 4 -q 16": ["java", "-Xmx128m", "-cp", os.path.join(ROOT, "build", "java"),
                                         "ThreadPool", "-s", "10", "-t", "4", "-q", "16"],
    # Chains two holders deep, the last asleep: every holder's switch re-reads them.
    "chain_locks -m sleep -n 100 -h 20": [os.path.join(WL, "chain_locks"), "-m", "sleep", "-n", "100", "-h", "20"],
}
VARIANTS = {"chains (default)": [], "--chains 0": ["--chains", "0"]}


def run(cmd, extra):
    p = subprocess.run([PT, "--self-stats", "-o", "/dev/null", *extra, "--", *cmd], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        raise SystemExit(f"chains_cost: parktrace exited {p.returncode}: {p.stderr.strip()[-300:]}")
    stats = {}
    for name, v in re.findall(r"\b([a-z_0-9]+)=([0-9.]+)\b", p.stderr):
        stats[name] = float(v)
    for prog in ("sched_switch", "sched_waking"):
        m = re.search(rf"\b{prog}=(\d+)x(\d+)ns", p.stderr)
        if m:
            stats[f"{prog}_runs"], stats[f"{prog}_ns"] = int(m.group(1)), int(m.group(2))
    return stats


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    got = {(w, v): [] for w in WORKLOADS for v in VARIANTS}
    for r in range(rounds):
        for w, cmd in WORKLOADS.items():
            order = list(VARIANTS) if r % 2 == 0 else list(reversed(VARIANTS))
            for v in order:
                got[(w, v)].append(run(cmd, VARIANTS[v]))
                print(f"round {r + 1}: {w}, {v}: {got[(w, v)][-1].get('bpf_ns_per_run')} ns/run", flush=True)
    med = lambda w, v, k: statistics.median(s.get(k, 0) for s in got[(w, v)])
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [
        "## Wait chains: what reading them costs (issue 43)",
        "",
        f"`python3 tools/bench/chains_cost.py {rounds}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{commit}, this machine): each workload under `parktrace --self-stats` with chains read (the default, "
        f"`--chains 10`) and with `--chains 0`, {rounds} interleaved runs each, medians. A chain is read only for "
        "a wait whose stack is kept (within the stack budget) and re-read at the switches of the holders in it.",
        "",
        "| workload | variant | BPF runs | BPF ns a run (all programs) | sched_switch ns a run | sched_waking ns a run "
        "| stack budget spent (% of a CPU) | chain budget spent (% of a CPU) | parktrace CPU s | chain parts dropped |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in WORKLOADS:
        for v in VARIANTS:
            lines.append(f"| `{w}` | {v} | {med(w, v, 'bpf_runs'):.0f} | {med(w, v, 'bpf_ns_per_run'):.0f} | "
                         f"{med(w, v, 'sched_switch_ns'):.0f} | {med(w, v, 'sched_waking_ns'):.0f} | "
                         f"{med(w, v, 'stack_budget_spent_pct'):.3f} | {med(w, v, 'chain_budget_spent_pct'):.3f} | "
                         f"{med(w, v, 'cpu_s'):.3f} | "
                         f"{med(w, v, 'drop_chains'):.0f} |")
    lines.append("")
    added = [f"`{w}` {med(w, 'chains (default)', 'bpf_ns_per_run') - med(w, '--chains 0', 'bpf_ns_per_run'):+.0f} ns"
             for w in WORKLOADS]
    lines.append("Added BPF time a run by chains: " + ", ".join(added) + ". Reading a chain costs microseconds "
                 "(a task lookup, its wait record and its name per link, the chain's entry); it is done only for the "
                 "waits whose stacks are kept, within a budget of its own as large as the stacks' (0.5% of each "
                 "CPU), so where chains are many and runs few (eight threads on three mutexes, a few thousand "
                 "runs a second) the mean run grows while the chain budget's share holds, and the stacks' share "
                 "is the same with chains or without; on the pool, whose waits are its queue's condition and "
                 "short lock waits, chains cost little.")
    block = "\n".join(lines) + "\n"
    print(block)
    bench.put_section("chains-cost", block)


if __name__ == "__main__":
    main()
