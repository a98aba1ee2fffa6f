#!/usr/bin/python3
"""parktrace's overhead and accuracy, measured against doing nothing and
against the tracers a user would otherwise pick. Variants run interleaved
(A B C ... A B C ...), and each traced run is compared with the untraced run
of the same round. Writes BENCHMARKS.md."""
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PT = os.path.join(ROOT, "build", "parktrace")
HOT = os.path.join(ROOT, "build", "workloads", "futex_hot")
PINGPONG = os.path.join(ROOT, "build", "workloads", "futex_pingpong")
JAVA_CP = os.path.join(ROOT, "build", "java")
LIBJVM = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
MC = os.path.join(ROOT, "build", "workloads", "mutex_contention")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "3"))
TMP = tempfile.mkdtemp(prefix="pt-bench-")

# The bpftrace equivalent of parktrace's futex tracing: time every
# FUTEX_WAIT-family call that sleeps, summed per (pid, futex address).
BPFTRACE = r"""
tracepoint:syscalls:sys_enter_futex
/ (args->op & 127) == 0 || (args->op & 127) == 9 || (args->op & 127) == 6 || (args->op & 127) == 11 /
{ @start[tid] = nsecs; @addr[tid] = args->uaddr; }
tracepoint:syscalls:sys_exit_futex /@start[tid]/
{
  if (args->ret != -11) {
    @wait_ns[pid, @addr[tid]] = sum(nsecs - @start[tid]);
    @waits[pid, @addr[tid]] = count();
    @hist[pid, @addr[tid]] = hist(nsecs - @start[tid]);
  }
  delete(@start[tid]); delete(@addr[tid]);
}
"""

# The classic way to see JVM parks: uprobes on HotSpot's Unsafe_Park (with
# its return) and Unsafe_Unpark, every call, blocking or not.
BPFTRACE_UPROBES = f"""
uprobe:{LIBJVM}:Unsafe_Park {{ @start[tid] = nsecs; }}
uretprobe:{LIBJVM}:Unsafe_Park /@start[tid]/
{{ @park_ns = sum(nsecs - @start[tid]); @parks = count(); delete(@start[tid]); }}
uprobe:{LIBJVM}:Unsafe_Unpark {{ @unparks = count(); }}
"""


class Tracer:
    """A tracer started before the workload and stopped after it."""

    def __init__(self, name, cmd, settle=2.0):
        self.name, self.cmd, self.settle = name, cmd, settle
        self.proc = None
        self.stats = []

    def start(self):
        if not self.cmd:
            return
        self.err = open(os.path.join(TMP, f"{self.name}.err"), "w+")
        self.started = time.time()
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=self.err)
        time.sleep(self.settle)
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.name} exited early: {open(self.err.name).read()}")

    def stop(self):
        if not self.proc:
            return
        self.proc.send_signal(signal.SIGINT)
        # The tracer's own CPU and peak RSS, from the kernel's accounting.
        _, _, ru = os.wait4(self.proc.pid, 0)
        life = time.time() - self.started
        self.stats.append({"cpu_pct": 100 * (ru.ru_utime + ru.ru_stime) / life, "rss_kb": ru.ru_maxrss})
        self.err.close()
        self.proc = None


# Each workload: a label, its command, and what it is.
WORKLOADS = [
    ("futex_hot -t 4 -w 1000", [HOT, "-t", "4", "-w", "1000"],
     "4 threads, one `pthread_mutex_t`, a short critical section and 1000 loop iterations of "
     "work outside it: about 250 000 futex calls a second, few of which sleep."),
    ("futex_hot -t 4 -w 200", [HOT, "-t", "4", "-w", "200"],
     "The same with 200 iterations outside: about 1.4 million futex calls a second, nearly "
     "all `FUTEX_WAKE` or `FUTEX_WAIT` returning `EAGAIN` at once. A stress point for probes "
     "on the futex system calls."),
    ("futex_pingpong", [PINGPONG],
     "Two threads hand a turn back and forth through a mutex and condition variable: every "
     "operation is a futex wait that sleeps and two context switches. The worst case for "
     "parktrace's default, scheduler-based probes."),
    ("java PingPong", ["java", "-Xmx128m", "-cp", JAVA_CP, "PingPong"],
     "Two Java threads unpark each other in turn with LockSupport: every operation is a "
     "JVM park that sleeps (the worst case named in `spec/environment.md`). The extra "
     "variant `bpftrace uprobes` attaches to `Unsafe_Park` (and its return) and "
     "`Unsafe_Unpark` in libjvm."),
]


def ops(cmd):
    out = subprocess.run(cmd + ["-s", str(SECONDS)], capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def tracers(label):
    extra = [Tracer("bpftrace uprobes", ["bpftrace", "-e", BPFTRACE_UPROBES], settle=4.0)] \
        if label.startswith("java") else []
    return [
        Tracer("untraced", None),
        Tracer("parktrace", [PT, "-i", "1s", "-o", "/dev/null"]),
        Tracer("parktrace --probes syscalls", [PT, "-i", "1s", "-o", "/dev/null", "--probes", "syscalls"]),
        Tracer("bpftrace", ["bpftrace", "-e", BPFTRACE], settle=4.0),
        Tracer("offcputime", ["offcputime", "-u"], settle=4.0),
    ] + extra


def bpf_ns_per_run(cmd, probes):
    """BPF run time needs kernel.bpf_stats_enabled, which slows every program
    run, so it is measured in a run of its own, never in the ratios."""
    p = subprocess.Popen([PT, "-i", "1s", "-o", "/dev/null", "--self-stats", "--probes", probes],
                         stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    ops(cmd)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    return int(re.search(r"bpf_ns_per_run=(\d+)", err).group(1))


def overhead(label, cmd, about):
    ts = tracers(label)
    raw = {t.name: [] for t in ts}
    for _ in range(ROUNDS):
        for t in ts:
            t.start()
            try:
                raw[t.name].append(ops(cmd))
            finally:
                t.stop()
    base = raw["untraced"]
    bpf_ns = {"parktrace": bpf_ns_per_run(cmd, "sched"),
              "parktrace --probes syscalls": bpf_ns_per_run(cmd, "syscalls")}
    rows = []
    for t in ts[1:]:
        ratios = [a / b for a, b in zip(raw[t.name], base)]
        rows.append({"variant": t.name, "median": statistics.median(ratios), "min": min(ratios),
                     "max": max(ratios), "ops": raw[t.name], "stats": t.stats,
                     "bpf_ns": bpf_ns.get(t.name)})
    return {"label": label, "about": about, "untraced_ops": base, "rows": rows}


def idle_cost():
    """Start-up (a 1 s run) and steady state (the rest of a 30 s run)."""
    def run(seconds):
        p = subprocess.run([PT, "-d", str(seconds), "-i", "1s", "-o", "/dev/null", "--self-stats"],
                           capture_output=True, text=True, timeout=120)
        m = re.search(r"cpu_s=(\S+) cpu_pct=(\S+) rss_kb=(\d+)", p.stderr)
        return float(m.group(1)), int(m.group(3))
    start_s, _ = run(1)
    total_s, rss = run(30)
    return {"startup_cpu_s": start_s, "cpu_pct": 100 * (total_s - start_s) / 29, "total_cpu_s": total_s,
            "rss_kb": rss}


def accuracy():
    rows = []
    for rnd in range(3):
        report = os.path.join(TMP, f"acc{rnd}.json")
        p = subprocess.run([PT, "-f", "json", "--top", "0", "--", MC, "-t", "8", "-m", "3", "-s", "3",
                            "-r", report], capture_output=True, text=True, timeout=60)
        final = [json.loads(l) for l in p.stdout.splitlines() if '"type":"final"' in l][0]
        wl = json.load(open(report))
        for m in wl["mutexes"]:
            b = [b for b in final["blockers"] if b["pid"] == wl["pid"] and b["name"] == m["name"]][0]
            rows.append({"what": m["name"], "hold_ms": m["hold_ns"] / 1e6,
                         "time_err": (b["thread_time_ns"] - m["blocked_ns"]) / m["blocked_ns"],
                         "parks_err": (b["parks"] - m["blocked"]) / m["blocked"],
                         "hold_err": (b["avg_hold_ns"] - m["hold_ns"]) / m["hold_ns"],
                         "wl_ns": m["blocked_ns"], "pt_ns": b["thread_time_ns"],
                         "wl_n": m["blocked"], "pt_n": b["parks"]})
        cond = [b for b in final["blockers"] if b["pid"] == wl["pid"] and b["name"] == wl["cond"]["name"]]
        pt_ns = sum(b["thread_time_ns"] for b in cond)
        rows.append({"what": "queue_nonempty (condvar)", "hold_ms": None,
                     "time_err": (pt_ns - wl["cond"]["wait_ns"]) / wl["cond"]["wait_ns"],
                     "parks_err": None, "hold_err": None, "wl_ns": wl["cond"]["wait_ns"], "pt_ns": pt_ns,
                     "wl_n": wl["cond"]["waits"], "pt_n": sum(b["parks"] for b in cond)})
    return rows


def pct(x):
    return "-" if x is None else f"{x * 100:+.2f}%"


def machine():
    cpu = "unknown"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return f"{os.cpu_count()} CPUs ({cpu}), kernel {platform.release()}, {platform.freedesktop_os_release().get('PRETTY_NAME', '')}"


def verdict(ok):
    return "PASS" if ok else "FAIL"


def write(results, path):
    L = []
    L.append("# parktrace benchmarks\n")
    L.append(f"Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()} "
             "by `make bench` (`tools/bench/run.sh`, which runs `tools/bench/bench.py`; "
             f"BENCH_ROUNDS={ROUNDS}, BENCH_SECONDS={SECONDS}).\n")
    L.append("Method: every variant runs the same workload in turn, round after round (untraced, "
             "parktrace, parktrace --probes syscalls, bpftrace, offcputime, untraced, ...). A tracer is started system-wide, "
             "given time to attach, then the workload runs and reports its own throughput. Each "
             "traced run is divided by the untraced run of the same round; tables give the median "
             "of those ratios and their min-max spread, with raw operations per second below.\n")
    L.append("Variants: `parktrace -i 1s` (default probes: `sched_switch`/`sched_waking`); "
             "`parktrace -i 1s --probes syscalls` (the futex syscall tracepoints); `bpftrace` with the equivalent script "
             "in `tools/bench/bench.py` (futex enter/exit timing per (pid, uaddr), count, sum and "
             "histogram); `offcputime -u` from libbpf-tools (sched_switch, user threads, stacks).\n")
    targets = []
    for ov in results["overhead"]:
        L.append(f"\n## `{ov['label']}`\n")
        L.append(ov["about"] + "\n")
        L.append("| variant | throughput ratio (median) | min | max | tracer CPU % of one core | tracer peak RSS | BPF ns/run |")
        L.append("|---|---|---|---|---|---|---|")
        for r in ov["rows"]:
            st = r["stats"]
            cpu = f"{statistics.median(s['cpu_pct'] for s in st):.2f}" if st else "-"
            rss = f"{max(s['rss_kb'] for s in st) / 1024:.1f} MiB" if st else "-"
            bns = str(r["bpf_ns"]) if r["bpf_ns"] else "-"
            L.append(f"| {r['variant']} | {r['median']:.3f} | {r['min']:.3f} | {r['max']:.3f} | {cpu} | {rss} | {bns} |")
        L.append("\nRaw ops/s per round: untraced " + ", ".join(f"{x:.0f}" for x in ov["untraced_ops"]))
        for r in ov["rows"]:
            L.append(f"; {r['variant']} " + ", ".join(f"{x:.0f}" for x in r["ops"]))
        L.append("\n")
        by = {r["variant"]: r for r in ov["rows"]}
        pt = by["parktrace"]
        cpu = statistics.median(s["cpu_pct"] for s in pt["stats"])
        rss = max(s["rss_kb"] for s in pt["stats"]) / 1024
        if ov["label"].startswith("futex_hot"):
            targets.append((f"{ov['label']}: throughput ratio >= 0.95", f"{pt['median']:.3f}",
                            verdict(pt["median"] >= 0.95)))
            targets.append((f"{ov['label']}: parktrace CPU <= 2% of a core", f"{cpu:.2f}%", verdict(cpu <= 2)))
            targets.append((f"{ov['label']}: parktrace RSS <= 64 MiB", f"{rss:.1f} MiB", verdict(rss <= 64)))
        else:
            for peer in ("bpftrace", "bpftrace uprobes"):
                if peer in by:
                    bt = by[peer]
                    targets.append((f"{ov['label']}: parktrace overhead below {peer}'s",
                                    f"{pt['median']:.3f} vs {bt['median']:.3f}",
                                    verdict(pt["median"] > bt["median"])))
    idle = results["idle"]
    L.append("\n## Idle system, traced system-wide\n")
    L.append(f"`parktrace -d 30 -i 1s --self-stats` on the otherwise idle machine used "
             f"{idle['total_cpu_s']:.3f} CPU seconds; a 1 s run used {idle['startup_cpu_s']:.3f} "
             "(loading BTF, the programs, and naming the first processes seen). The steady state, the "
             f"difference over the remaining 29 s, is {idle['cpu_pct']:.3f}% of one core. Peak RSS "
             f"{idle['rss_kb'] / 1024:.1f} MiB.\n")
    targets.append(("idle system-wide: CPU < 0.5% of a core", f"{idle['cpu_pct']:.3f}%", verdict(idle["cpu_pct"] < 0.5)))
    L.append("\n## Accuracy against the workload's own timings\n")
    L.append("`parktrace -f json -- mutex_contention -t 8 -m 3 -s 3`, 3 runs. The workload times every "
             "`pthread_mutex_lock` that blocked and every `pthread_cond_wait`; relative error of "
             "parktrace's `thread_time_ns`, `parks` and `avg_hold_ns` (against the preset hold).\n")
    L.append("| blocker | preset hold | thread time error | parks error | avg hold error | workload ns | parktrace ns | workload waits | parktrace parks |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    worst = 0
    for r in results["accuracy"]:
        hold = f"{r['hold_ms']:.1f} ms" if r["hold_ms"] else "-"
        L.append(f"| {r['what']} | {hold} | {pct(r['time_err'])} | {pct(r['parks_err'])} | {pct(r['hold_err'])} "
                 f"| {r['wl_ns']} | {r['pt_ns']} | {r['wl_n']} | {r['pt_n']} |")
        worst = max(worst, abs(r["time_err"]))
    targets.append(("accuracy: thread time within 2% for waits >= 1 ms", f"worst {worst * 100:.2f}%", verdict(worst <= 0.02)))
    L.append("\n## Targets\n")
    L.append("| target | measured | result |")
    L.append("|---|---|---|")
    for t in targets:
        L.append(f"| {t[0]} | {t[1]} | {t[2]} |")
    L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n" + NOTES)
    return targets


NOTES = open(os.path.join(ROOT, "tools", "bench", "notes.md")).read()

if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("bench: needs root")
    results = {"overhead": [overhead(*w) for w in WORKLOADS], "idle": idle_cost(), "accuracy": accuracy()}
    json.dump(results, open(os.path.join(ROOT, "build", "bench-results.json"), "w"), indent=1)
    for t in write(results, os.path.join(ROOT, "BENCHMARKS.md")):
        print(f"{t[2]} {t[0]}: {t[1]}")
