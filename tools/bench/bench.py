#!/usr/bin/python3
"""parktrace's overhead and accuracy, measured against doing nothing and
against the tracers a user would otherwise pick. Variants run interleaved
(A B C ... A B C ...), and each traced run is compared with the untraced run
of the same round. Writes BENCHMARKS.md.

Environment: BENCH_ROUNDS (5), BENCH_SECONDS (3), BENCH_SERVER_SECONDS (5,
the load's length on the real servers), and BENCH_ONLY, a comma-separated
list of parts of workload labels ("pingpong", "java") and "idle",
"accuracy" or "servers" (or one server's name, "postgres"), to run only
those; such a partial run writes build/BENCHMARKS.partial.md and leaves
BENCHMARKS.md alone."""
import contextlib
import importlib
import json
import math
import os
import shutil
import platform
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from jfr_parks import JFR, PARK_JFC, jfr_parks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PT = os.path.join(ROOT, "build", "parktrace")
HOT = os.path.join(ROOT, "build", "workloads", "futex_hot")
PINGPONG = os.path.join(ROOT, "build", "workloads", "futex_pingpong")
SYSBENCH = os.path.join(ROOT, "tools", "workloads", "sysbench_ops.sh")
JETTY = os.path.join(ROOT, "tools", "bench", "jetty", "jetty_wrk.sh")
HOOKS_FLOOR = os.path.join(ROOT, "build", "bench", "hooks_floor")
JAVA_CP = os.path.join(ROOT, "build", "java")
JDK = "/usr/lib/jvm/java-17-openjdk-amd64"
JAVA = os.path.join(JDK, "bin", "java")
LIBJVM = os.path.join(JDK, "lib", "server", "libjvm.so")
MC = os.path.join(ROOT, "build", "workloads", "mutex_contention")
MANY = os.path.join(ROOT, "build", "workloads", "many_blockers")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "3"))
# Comma-separated parts of workload labels (case-insensitive), plus "idle" and
# "accuracy", to run only those sections; a partial run never touches
# BENCHMARKS.md (it writes build/BENCHMARKS.partial.md).
# A git revision to measure beside this build ("parktrace @REV", same run,
# same rounds): what a change costs, free of the day-to-day drift between runs.
BASELINE = os.environ.get("BENCH_BASELINE", "").strip()
ONLY = [w.strip().lower() for w in os.environ.get("BENCH_ONLY", "").split(",") if w.strip()]
TMP = tempfile.mkdtemp(prefix="pt-bench-")
T0 = time.time()


def log(msg):
    el = int(time.time() - T0)
    print(f"[{el // 60:02d}:{el % 60:02d}] {msg}", file=sys.stderr, flush=True)


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

JFC = os.path.join(TMP, "threadpark.jfc")
with open(JFC, "w") as f:
    f.write(PARK_JFC)


def probe_fds(pid):
    """How many perf-event and BPF-link descriptors a tracer holds: its
    attached probes."""
    n = 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        n += "perf_event" in target or "bpf_link" in target
    return n


def wait_attached(proc, cap):
    """Returns once PROC's probes are attached (their count nonzero and
    unchanged for 0.3 s), plus a 0.5 s margin for the rest of its start-up;
    at most CAP seconds. The peer tracers attach within 0.3 s of their start
    on this machine (bpftrace's compile included): the fixed 4 s they were
    first given only made the benchmark longer."""
    t0 = time.time()
    last, since = -1, t0
    while time.time() - t0 < cap and proc.poll() is None:
        n = probe_fds(proc.pid)
        now = time.time()
        if n != last:
            last, since = n, now
        elif n > 0 and now - since >= 0.3:
            time.sleep(min(0.5, max(0, cap - (now - t0))))
            return
        time.sleep(0.02)


class Variant:
    """A way to run the workload: untraced, under a system-wide tracer
    started before it and stopped after it, or (JFR) with extra JVM flags."""

    def __init__(self, name, cmd=None, settle=2.0, until_attached=False, jvm_flags=None, stats=False):
        # parktrace is given a fixed 2 s, as in the first benchmarks, so that
        # its CPU share over its whole life, start-up included, stays
        # comparable with theirs; the peers, up to SETTLE seconds until their
        # probes are attached. The 2% target is judged on the CPU from the
        # settle's end to exit: the cost of tracing the workload.
        self.name, self.cmd, self.settle, self.until_attached = name, cmd, settle, until_attached
        self.jvm_flags = jvm_flags          # function of the run's recording path
        self.bpf_stats = stats              # takes --self-stats: a BPF ns/run run of its own
        self.proc = None
        self.stats = []
        self.recordings = []

    def wrap(self, cmd):
        if not self.jvm_flags:
            return cmd
        rec = os.path.join(TMP, f"{self.name.replace(' ', '-')}-run{len(self.recordings)}.jfr")
        self.recordings.append(rec)
        if cmd[0] == JETTY:     # the script starts the JVM: flags by environment
            return ["env", "JETTY_JVM_FLAGS=" + " ".join(self.jvm_flags(rec))] + cmd
        return cmd[:1] + self.jvm_flags(rec) + cmd[1:]

    def start(self):
        if not self.cmd:
            return
        self.err = open(os.path.join(TMP, f"{self.name}.err"), "w+")
        self.started = time.time()
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=self.err)
        if self.until_attached:
            wait_attached(self.proc, self.settle)
        else:
            time.sleep(self.settle)
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.name} exited early: {open(self.err.name).read()}")
        # Where the workload's run begins: start-up is over (for parktrace,
        # about 0.14 s of CPU, most of a 5 s life's share).
        self.settled_ns, self.settled = tree_run_ns(self.proc.pid), time.time()

    def stop(self):
        if self.recordings:
            rec = self.recordings[-1]
            if not os.path.exists(rec) or os.path.getsize(rec) == 0:
                raise RuntimeError(f"{self.name}: no recording at {rec}")
            for old in self.recordings[:-1]:
                if os.path.exists(old):
                    os.unlink(old)
        if not self.proc:
            return
        ru = stop_and_reap(self.proc)
        now = time.time()
        cpu_s = ru.ru_utime + ru.ru_stime
        self.stats.append({"cpu_pct": 100 * cpu_s / (now - self.started), "rss_kb": ru.ru_maxrss,
                           "tracing_cpu_pct": 100 * (cpu_s - self.settled_ns / 1e9) / (now - self.settled)})
        self.err.close()
        self.proc = None


def where_stuck(proc):
    """Where a tracer that missed its SIGINT is: its threads' stacks, user
    (gdb) and kernel, into the log, as evidence for a bug report."""
    log(f"{proc.args[0]} ({proc.pid}) still runs 10 s after SIGINT; its stacks:")
    try:
        bt = subprocess.run(["gdb", "-p", str(proc.pid), "-batch", "-ex", "thread apply all bt 30"],
                            capture_output=True, text=True, timeout=60).stdout
        log("\n".join(l for l in bt.splitlines() if l.startswith(("#", "Thread"))))
        for tid in os.listdir(f"/proc/{proc.pid}/task"):
            with open(f"/proc/{proc.pid}/task/{tid}/stack") as f:
                log(f"kernel stack of {tid}:\n{f.read()}")
    except (OSError, subprocess.SubprocessError) as e:
        log(f"(no stacks: {e})")


def stop_and_reap(proc):
    """SIGINT, and the tracer's rusage (its own CPU and peak RSS, from the
    kernel's accounting). bpftrace has been seen to miss a SIGINT and sit
    in epoll_wait: the signal is sent again every 10 s, and after 30 s the
    tracer is killed (and said so on stderr)."""
    for attempt in range(3):
        proc.send_signal(signal.SIGINT)
        deadline = time.time() + 10
        while time.time() < deadline:
            pid, _, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = 0     # reaped here, not by Popen
                return ru
            time.sleep(0.05)
        if attempt == 0:
            where_stuck(proc)
    log(f"{proc.args[0]} ignored SIGINT for 30 s: killed")
    proc.kill()
    _, _, ru = os.wait4(proc.pid, 0)
    proc.returncode = -signal.SIGKILL
    return ru


PT_RUN = [PT, "-i", "1s", "-o", "/dev/null"]
VARIANTS = {
    "parktrace": lambda: Variant("parktrace", PT_RUN, stats=True),
    "parktrace --probes uprobes": lambda: Variant("parktrace --probes uprobes", PT_RUN + ["--probes", "uprobes"],
                                                  stats=True),
    "parktrace --probes syscalls": lambda: Variant("parktrace --probes syscalls", PT_RUN + ["--probes", "syscalls"],
                                                   stats=True),
    "parktrace --unwind copy": lambda: Variant("parktrace --unwind copy", PT_RUN + ["--unwind", "copy"],
                                               stats=True),
    "JFR": lambda: Variant("JFR", jvm_flags=lambda rec: [
        f"-XX:StartFlightRecording:filename={rec},dumponexit=true,settings={JFC}"]),
    "JFR default": lambda: Variant("JFR default", jvm_flags=lambda rec: [
        f"-XX:StartFlightRecording:filename={rec},dumponexit=true"]),
    "bpftrace": lambda: Variant("bpftrace", ["bpftrace", "-e", BPFTRACE], settle=4.0, until_attached=True),
    "bpftrace uprobes": lambda: Variant("bpftrace uprobes", ["bpftrace", "-e", BPFTRACE_UPROBES], settle=4.0,
                                        until_attached=True),
    "offcputime": lambda: Variant("offcputime", ["offcputime", "-u"], settle=4.0, until_attached=True),
    # The floor: two programs that do nothing on parktrace's hooks.
    "hooks alone": lambda: Variant("hooks alone", [HOOKS_FLOOR], settle=4.0, until_attached=True, stats=True),
}
C_VARIANTS = ["parktrace", "parktrace --probes syscalls", "bpftrace", "offcputime", "hooks alone"]
JAVA_VARIANTS = ["parktrace", "parktrace --probes uprobes", "parktrace --probes syscalls", "JFR", "bpftrace",
                 "bpftrace uprobes"]
# Also on the realistic Java workloads: JFR as it ships, for scale.
JAVA_REAL_VARIANTS = JAVA_VARIANTS + ["JFR default"]


def baseline_binary(rev):
    """parktrace built at REV (its own Makefile, BPF programs and skeleton)
    in build/baseline-<sha>, exported with git archive so the work tree is
    untouched."""
    sha = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", rev], capture_output=True, text=True,
                         check=True).stdout.strip()
    src = os.path.join(ROOT, "build", f"baseline-{sha}")
    binary = os.path.join(src, "build", "parktrace")
    if not os.path.exists(binary):
        log(f"building parktrace at {rev} ({sha}) in {src}")
        os.makedirs(src, exist_ok=True)
        archive = subprocess.Popen(["git", "-C", ROOT, "archive", sha], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", src], stdin=archive.stdout, check=True)
        archive.wait()
        subprocess.run(["make", "-C", src, "-j2", "build/parktrace"], check=True, stdout=subprocess.DEVNULL)
    return f"parktrace @{sha}", binary


# Issue #6's alternative to the kernel's CFI walk: stack copies unwound in
# user space (and the frame-pointer walk as their key).
UNWIND_VARIANT = "parktrace --unwind copy"


def with_baseline(variants):
    """The baseline and the stack-copy mode go right after parktrace, where a
    workload has it."""
    if "parktrace" not in variants:
        return variants
    i = variants.index("parktrace") + 1
    extra = ([BASELINE_VARIANT] if BASELINE_VARIANT else []) + [UNWIND_VARIANT]
    return variants[:i] + extra + variants[i:]


BASELINE_VARIANT = None
if BASELINE:
    BASELINE_VARIANT, _bin = baseline_binary(BASELINE)
    VARIANTS[BASELINE_VARIANT] = lambda: Variant(BASELINE_VARIANT, [_bin] + PT_RUN[1:], stats=True)


def java(*args):
    return [JAVA, "-Xmx128m", "-cp", JAVA_CP, *args]


def hooks_alone(by, key, fmt):
    """The same figure for the hooks alone (the empty programs), where they ran."""
    v = by.get("hooks alone", {}).get(key)
    return f" (the hooks alone: {fmt(v)})" if v is not None else ""


def ratio_at_least(floor):
    def check(label, by):
        return [floor_target(label, by, floor)]
    return check


def cpu_cell(stats):
    """A tracer's median CPU share while tracing, and over its whole life."""
    if not stats:
        return "-"
    life = statistics.median(s["cpu_pct"] for s in stats)
    if "tracing_cpu_pct" not in stats[0]:       # results from before it was measured
        return f"{life:.2f}"
    return f"{statistics.median(s['tracing_cpu_pct'] for s in stats):.2f} ({life:.2f})"


def cost_targets(label, by):
    """The CPU target is the cost of tracing the workload (issue 2: "while
    tracing that workload"): from the end of the tracer's 2 s settle to its
    exit, final report included. Its whole life's share, start-up included,
    is shown beside it: at a 5 s life start-up alone is near 3%."""
    pt = by["parktrace"]
    life = statistics.median(s["cpu_pct"] for s in pt["stats"])
    rss = max(s["rss_kb"] for s in pt["stats"]) / 1024
    if "tracing_cpu_pct" not in pt["stats"][0]:     # results from before it was measured
        return [(f"{label}: parktrace CPU <= 2% of a core", f"{life:.2f}%", verdict(life <= 2)),
                (f"{label}: parktrace RSS <= 64 MiB", f"{rss:.1f} MiB", verdict(rss <= 64))]
    cpu = statistics.median(s["tracing_cpu_pct"] for s in pt["stats"])
    return [(f"{label}: parktrace CPU <= 2% of a core while tracing it",
             f"{cpu:.2f}% (over its whole life, start-up included: {life:.2f}%)", verdict(cpu <= 2)),
            (f"{label}: parktrace RSS <= 64 MiB", f"{rss:.1f} MiB", verdict(rss <= 64))]


P99_LIMIT_NS = 20000


# Untraced runs that swing by more than this (range over median) cannot
# judge a target by throughput (issue 16).
SWING_LIMIT = 0.10


def swing(ops):
    """How far untraced runs moved between rounds: their range over their median."""
    return (max(ops) - min(ops)) / statistics.median(ops)


def cpu_judges(by, peer=None, cpu_key="cpu_ratio"):
    """Why machine CPU per operation, not throughput, judges parktrace
    against untraced, or against PEER; None when throughput does. Issue 16:
    where untraced runs swing by more than 10%, throughput cannot tell a
    point apart. Against a peer, too, when the two medians are closer than
    the untraced runs' own swing (sleep-bound workloads tie at 0.999)."""
    if by["parktrace"].get(cpu_key) is None or (peer and by[peer].get(cpu_key) is None):
        return None
    moved = swing(by["untraced"]["ops"])
    if moved > SWING_LIMIT:
        return f"untraced runs swung {100 * moved:.0f}%"
    if peer and abs(by["parktrace"]["median"] - by[peer]["median"]) < moved:
        return f"throughputs closer than the untraced runs' {100 * moved:.1f}% swing"
    return None


def floor_target(label, by, floor, cpu_key="cpu_ratio"):
    """Throughput at least FLOOR of untraced, or, where cpu_judges says so,
    machine CPU per operation at most 1 / FLOOR of untraced's."""
    pt = by["parktrace"]["median"]
    why = cpu_judges(by, cpu_key=cpu_key)
    if not why:
        ok = pt >= floor
        return (f"{label}: throughput ratio >= {floor}",
                f"{pt:.3f}" + hooks_alone(by, "median", "{:.3f}".format) + bpf_share(by)
                + ("" if ok else out_of_reach(by, floor)), verdict(ok))
    c = by["parktrace"][cpu_key]
    ok = c <= 1 / floor
    return (f"{label}: throughput ratio >= {floor} ({why}: machine CPU per operation)",
            f"CPU per op {c:.3f} of untraced (throughput {pt:.3f})" + hooks_alone(by, cpu_key, "{:.3f}".format)
            + bpf_share(by) + ("" if ok else out_of_reach(by, floor)), verdict(ok))


def out_of_reach(by, floor):
    """Why a floor cannot be met at the workload's event rate, or "": the
    BPF programs alone took more of the machine's busy CPU than the floor
    leaves for all of tracing (a share s costs at least 1 / (1 - s) CPU
    per operation), and the mean run time that would fit."""
    c = by["parktrace"].get("bpf_cost") or {}
    share, allow = c.get("machine_share"), 1 - floor
    if not share or share <= allow:
        return ""
    hooks = by.get("hooks alone", {}).get("bpf_ns")
    return (f"; out of reach at this event rate: the floor leaves BPF {100 * allow:.0f}% of the machine's "
            f"CPU, {c['ns'] * allow / share:.0f} ns a run against {c['ns']} ns"
            + (f" (the empty hooks alone: {hooks} ns)" if hooks else ""))


def ahead_target(label, by, peer, what, cpu_key="cpu_ratio"):
    """parktrace's throughput above PEER's, or its machine CPU per operation
    below PEER's where cpu_judges says so. WHAT names the target."""
    pt, other = by["parktrace"]["median"], by[peer]["median"]
    why = cpu_judges(by, peer, cpu_key)
    if not why:
        return (f"{label}: {what}", f"{pt:.3f} vs {other:.3f}", verdict(pt > other))
    c, o = by["parktrace"][cpu_key], by[peer][cpu_key]
    return (f"{label}: {what} ({why}: machine CPU per operation)",
            f"CPU per op {c:.3f} vs {o:.3f} of untraced (throughput {pt:.3f} vs {other:.3f})", verdict(c < o))


def ratio_at_least_unless_swinging(floor, elsewhere):
    """ratio_at_least, where the untraced runs agree within 10%; where they
    swing more (issue 16), the ratio is shown but judged ELSEWHERE."""
    def check(label, by):
        moved = swing(by["untraced"]["ops"])
        if moved <= SWING_LIMIT:
            return ratio_at_least(floor)(label, by)
        return [(f"{label}: throughput ratio >= {floor}",
                 f"{by['parktrace']['median']:.3f}, but untraced runs swung {100 * moved:.0f}%: judged on {elsewhere}",
                 "n/a")]
    return check


def bpf_cost_at_most(mean_ns):
    """Issue 16: parktrace's mean BPF run time per event, and no hot
    program's 99th percentile above 20 us."""
    def check(label, by):
        c = by["parktrace"].get("bpf_cost")
        if not c:
            return []
        p99 = max(c["switch_p99"], c["waking_p99"])
        return [(f"{label}: mean BPF run time per event <= {mean_ns} ns",
                 f"{c['ns']} ns" + hooks_alone(by, "bpf_ns", "{} ns".format), verdict(c["ns"] <= mean_ns)),
                (f"{label}: BPF run time p99 <= 20 us", f"{p99} ns", verdict(0 < p99 <= P99_LIMIT_NS))]
    return check


def below_peers(*peers):
    def check(label, by):
        return [ahead_target(label, by, p, f"parktrace overhead below {p}'s") for p in peers if p in by]
    return check


def least_cpu_of_all(label, by):
    """Extra CPU per blocking wait: what tracing costs for each park that
    sleeps, however much the tracer changes how often the hand-off sleeps
    (see the notes)."""
    pt = by["parktrace"]["switch_ratio"]
    # Issue #3's set: the other probe modes, JFR and the bpftrace scripts.
    others = [r for name, r in by.items() if name != "parktrace" and name in JAVA_VARIANTS]
    # (The stack-copy mode is a way of taking stacks, not a probe mode.)
    best = min(others, key=lambda r: r["switch_ratio"])
    return [(f"{label}: default mode's extra CPU per blocking wait the lowest of the probe modes, JFR "
             "and bpftrace",
             f"{pt:.3f} vs {best['switch_ratio']:.3f} ({best['variant']}, the best of the others)",
             verdict(pt < best["switch_ratio"]))]


def against_baseline(ov, by):
    """This build against the baseline build, paired round by round (both
    ratios share the round's untraced run): the change in throughput ratio,
    in percentage points, and in CPU per operation."""
    u, pt, base = ov["untraced_ops"], by["parktrace"], by[BASELINE_VARIANT]
    diff = statistics.median((a - b) / x for a, b, x in zip(pt["ops"], base["ops"], u))
    cpu = pt["cpu_ratio"] / base["cpu_ratio"] - 1
    return [(f"{ov['label']}: parktrace's throughput ratio within 1 pp of {BASELINE_VARIANT}'s",
             f"{diff * 100:+.1f} pp (CPU per operation {cpu * 100:+.1f}%)", verdict(diff >= -0.01))]


# Jetty's load runs at least this long: its JIT's state after a fresh start
# swung 3 s loads by a third between rounds, tracing or not.
JETTY_MIN_SECONDS = 10

# Each workload: a label, its command for a run of S seconds, what it is, the
# variants it runs under, and the targets checked on it.
WORKLOADS = [
    {"label": "futex_hot -t 4 -w 1000", "cmd": lambda s: [HOT, "-t", "4", "-w", "1000", "-s", str(s)],
     "about": "4 threads, one `pthread_mutex_t`, a short critical section and 1000 loop iterations of "
     "work outside it: about 250 000 futex calls a second, few of which sleep.",
     "variants": C_VARIANTS, "targets": [ratio_at_least(0.95), cost_targets]},
    {"label": "futex_hot -t 4 -w 200", "cmd": lambda s: [HOT, "-t", "4", "-w", "200", "-s", str(s)],
     "about": "The same with 200 iterations outside: about 1.4 million futex calls a second, nearly "
     "all `FUTEX_WAKE` or `FUTEX_WAIT` returning `EAGAIN` at once. A stress point for probes "
     "on the futex system calls.",
     "variants": C_VARIANTS, "targets": [ratio_at_least(0.95), cost_targets]},
    {"label": "futex_pingpong", "cmd": lambda s: [PINGPONG, "-s", str(s)],
     "about": "Two threads hand a turn back and forth through a mutex and condition variable: every "
     "operation is a futex wait that sleeps and two context switches. The worst case for "
     "parktrace's default, scheduler-based probes.",
     "variants": C_VARIANTS, "targets": [ratio_at_least(0.95), below_peers("bpftrace"), bpf_cost_at_most(300)]},
    {"label": "sysbench mutex", "cmd": lambda s: [SYSBENCH, "mutex", str(s)],
     "about": "sysbench's `mutex` test (`tools/workloads/sysbench_ops.sh`) with its defaults: 4 "
     "threads each take a random one of 4096 `pthread_mutex_t`s after 10 000 loop iterations, "
     "150 000 S times each; takes seldom collide, so this measures what tracing adds to an "
     "application that locks a lot and rarely waits. Throughput is takes per second.",
     "variants": C_VARIANTS, "targets": [ratio_at_least(0.95)]},
    {"label": "sysbench threads", "cmd": lambda s: [SYSBENCH, "threads", str(s)],
     "about": "sysbench's `threads` test: 8 threads, each event 100 `sched_yield()`s, each inside "
     "one of 4 mutexes (`--thread-locks=4`), for S seconds: a scheduler stress with real mutex "
     "contention. Throughput is events per second.",
     "variants": C_VARIANTS, "targets": [ratio_at_least(0.95)]},
    {"label": "java PingPong", "cmd": lambda s: java("PingPong", "-s", str(s)),
     "about": "Two Java threads unpark each other in turn with LockSupport: every operation is a "
     "JVM park that sleeps (the worst case named in `docs/contract/environment.md`, and in issue #3: "
     "each probe mode beside JFR and the bpftrace scripts, the default mode's overhead the "
     "lowest). Throughput is round trips per second over S seconds after a 500 ms warm-up.",
     "variants": JAVA_REAL_VARIANTS + ["offcputime", "hooks alone"],
     "targets": [ratio_at_least(0.95), below_peers("JFR", "JFR default", "bpftrace", "bpftrace uprobes"),
                 least_cpu_of_all, bpf_cost_at_most(300)]},
    {"label": "jetty under wrk", "cmd": lambda s: [JETTY, str(s)], "min_seconds": JETTY_MIN_SECONDS,
     "about": "A real server: Jetty 9 from Debian (`libjetty9-java`) with a 16-thread "
     "`QueuedThreadPool` and a small handler (`tools/bench/jetty/JettyHello.java`: a lookup in "
     "a shared synchronized map, a short text answer), started by the benchmark on loopback, "
     "warmed up for 3 s with `wrk`, then loaded for S seconds, at least 10, by `wrk -t2 -c32` (with "
     "3 s loads its untraced runs swung by a third between rounds: 56.6k, 66.5k and 75.3k "
     "requests a second; with 10 s, by 8%); throughput is "
     "wrk's requests per second. Server, wrk and tracer share the 2 CPUs.",
     "variants": JAVA_REAL_VARIANTS,
     "targets": [ratio_at_least_unless_swinging(0.99, "the servers' Jetty, started once"),
                 below_peers("JFR", "JFR default"), bpf_cost_at_most(1000)]},
    {"label": "java FrequentLock", "cmd": lambda s: java("FrequentLock", str(s), "8"),
     "about": "The frequently-acquired-lock pattern (`tools/workloads/FrequentLock.java`): 8 threads, "
     "two fair `ReentrantLock`s each held 32 ms, the first taken three times as often, so "
     "threads always queue for it. Throughput is the frequent lock's acquisitions per second, "
     "timed from its first to its last acquisition after a 500 ms warm-up and before the S "
     "seconds are up (timing the acquisitions, not counting them, resolves far better than "
     "one acquisition in 80): about 31 a second, "
     "one per 32 ms hold plus the hand-off, whatever the tracer; the ratio shows whether "
     "tracing stretches the hand-offs.",
     "variants": JAVA_REAL_VARIANTS, "targets": [ratio_at_least(0.99), below_peers("JFR", "JFR default")],
     # About 40 parks a second: the machine's other activity would set its BPF ns/run.
     "bpf_stats": False},
    {"label": "java LargeCriticalSection", "cmd": lambda s: java("LargeCriticalSection", str(s), "3"),
     "about": "The large-critical-section pattern (`tools/workloads/LargeCriticalSection.java`): three "
     "`ReentrantLock`s whose critical sections sleep 4, 16 and 64 ms, each with its own 3 threads, "
     "so every lock is always contended. Throughput is the three locks' acquisitions per second, "
     "each timed from its first to its last acquisition after a 500 ms warm-up: about 330 a "
     "second, set by the holds; the ratio shows whether tracing stretches the hand-offs.",
     "variants": JAVA_REAL_VARIANTS, "targets": [ratio_at_least(0.99), below_peers("JFR", "JFR default")],
     # About 330 parks a second: the machine's other activity would set its BPF ns/run.
     "bpf_stats": False},
    {"label": "java ThreadPool", "cmd": lambda s: java("ThreadPool", "-s", str(s), "-t", "4", "-q", "16"),
     "about": "A thread-pool workload (`tools/workloads/ThreadPool.java`): `Executors.newFixedThreadPool(4)` "
     "fed by one producer through its `LinkedBlockingQueue`, at most 16 tasks queued or running "
     "(a `Semaphore`, the bounded-executor idiom). Each task hashes 2-6 KiB, about 5 us of CPU. "
     "Workers park on the queue's `notEmpty` condition and its `takeLock`, the producer on the "
     "semaphore whenever the pool is full: untraced, about 150 000 tasks a second with, by "
     "parktrace's count, some 40 000 parks a second on the semaphore, 15 000 on `notEmpty` and a "
     "few hundred on `takeLock` (half a voluntary context switch per task), on top of the work. "
     "Throughput is tasks completed per second over S seconds after a 500 ms warm-up.",
     "variants": JAVA_REAL_VARIANTS + ["hooks alone"],
     "targets": [ratio_at_least(0.99), below_peers("JFR", "JFR default"), bpf_cost_at_most(300)]},
]


def ops(cmd, cpu=None):
    """The workload's operations per second; with CPU (a list), also appends
    the CPU seconds its process used (user and system, all threads) and its
    voluntary context switches."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    if p.returncode:
        raise subprocess.CalledProcessError(p.returncode, cmd, out, err)
    if cpu is not None:
        cpu.extend(child_cpu())
    found = re.findall(r"^ops_per_sec (\S+)$", out, re.M)
    return float(found[-1] if found else out.split()[-1])


_children = [0.0, 0]


def child_cpu():
    """CPU seconds and voluntary context switches of the child that ended
    last (from the running totals of waited-for children's usage)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = ru.ru_utime + ru.ru_stime
    used, _children[0] = total - _children[0], total
    switches, _children[1] = ru.ru_nvcsw - _children[1], ru.ru_nvcsw
    return used, switches


def proc_cpu(pid):
    """CPU seconds a live process has used so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def bpf_cost(err, busy_s=0.0):
    """--self-stats' BPF figures: the mean run time over every program's
    runs (the kernel's bpf_stats) and the hot programs' 99th percentiles;
    with BUSY_S, the machine's busy CPU seconds meanwhile, the share of it
    that BPF took (what tracing must cost at least, at that event rate)."""
    st = dict(re.findall(r"(\w+)=(\d+)\b", err))
    c = {"ns": int(st["bpf_ns_per_run"]), "switch_p99": int(st.get("sched_switch_p99_ns", 0)),
         "waking_p99": int(st.get("sched_waking_p99_ns", 0))}
    if busy_s > 0 and "bpf_runs" in st:
        c["machine_share"] = int(st["bpf_runs"]) * c["ns"] / 1e9 / busy_s
    return c


def bpf_share(by):
    """The BPF share of the machine's CPU, for a target's value, or ""."""
    share = (by["parktrace"].get("bpf_cost") or {}).get("machine_share")
    return f" (BPF alone: {100 * share:.1f}% of the machine's busy CPU)" if share else ""


def bpf_ns_per_run(cmd, tracer_cmd):
    """BPF run time needs kernel.bpf_stats_enabled, which slows every program
    run, so it is measured in a run of its own, never in the ratios."""
    p = subprocess.Popen(tracer_cmd + ["--self-stats"], stderr=subprocess.PIPE, text=True)
    wait_attached(p, 2.0)
    busy = machine_busy()
    ops(cmd)
    busy = machine_busy() - busy
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    return bpf_cost(err, busy)


def jfr_summary(rec):
    """Events per type in a recording, the empty types left out."""
    p = subprocess.run([JFR, "summary", rec], capture_output=True, text=True, timeout=120)
    counts = {}
    for m in re.finditer(r"^\s*(\S+)\s+(\d+)\s+(\d+)\s*$", p.stdout, re.M):
        if int(m.group(2)):
            counts[m.group(1)] = int(m.group(2))
    return counts


def overhead(w):
    label = w["label"]
    secs = max(SECONDS, w.get("min_seconds", 0))
    cmd = w["cmd"](secs)
    ts = [Variant("untraced")] + [VARIANTS[v]() for v in with_baseline(w["variants"])]
    raw = {t.name: [] for t in ts}
    # CPU per operation: the workload's CPU (BPF programs run in its threads'
    # context and count there, as does JFR) plus the tracer's during the run.
    cpu_op = {t.name: [] for t in ts}
    cpu_switch = {t.name: [] for t in ts}
    # A peer that cannot start (a JFR setting the JDK refuses, bpftrace
    # without a probe) is said in the workload's section and left out of
    # its later rounds; the others are measured as before.
    failed = {}
    for rnd in range(ROUNDS):
        for t in ts:
            if t.name in failed:
                continue
            try:
                t.start()
            except RuntimeError as e:
                if t.name in ("untraced", "parktrace"):
                    raise
                with contextlib.suppress(Exception):
                    t.stop()
                failed[t.name] = " ".join(str(e).split())[:300]
                log(f"{label}: {t.name} did not start, left out: {failed[t.name]}")
                continue
            try:
                child_cpu()
                tracer0 = proc_cpu(t.proc.pid) if t.proc else 0.0
                used = []
                raw[t.name].append(ops(t.wrap(cmd), used))
                tracer = (proc_cpu(t.proc.pid) - tracer0) if t.proc else 0.0
                cpu_op[t.name].append((used[0] + tracer) / (raw[t.name][-1] * secs))
                # Per blocking wait: a voluntary switch is a wait that slept.
                cpu_switch[t.name].append((used[0] + tracer) / max(used[1], 1))
            finally:
                t.stop()
            log(f"{label} round {rnd + 1}/{ROUNDS}: {t.name} {raw[t.name][-1]:.0f} ops/s")
    base = raw["untraced"]
    ts = [t for t in ts if t.name not in failed]
    bpf_ns = {t.name: bpf_ns_per_run(cmd, t.cmd) for t in ts if t.bpf_stats and w.get("bpf_stats", True)}
    rows = []
    for t in ts[1:]:
        ratios = [a / b for a, b in zip(raw[t.name], base)]
        cpu_ratios = [a / b for a, b in zip(cpu_op[t.name], cpu_op["untraced"])]
        switch_ratios = [a / b for a, b in zip(cpu_switch[t.name], cpu_switch["untraced"])]
        row = {"variant": t.name, "median": statistics.median(ratios), "min": min(ratios),
               "max": max(ratios), "ops": raw[t.name], "stats": t.stats, "bpf_ns": bpf_ns.get(t.name, {}).get("ns"),
               "bpf_cost": bpf_ns.get(t.name),
               "cpu_ratio": statistics.median(cpu_ratios), "switch_ratio": statistics.median(switch_ratios)}
        if t.recordings:
            row["jfr_events"] = jfr_summary(t.recordings[-1])
            os.unlink(t.recordings[-1])
        rows.append(row)
    return {"label": label, "about": w["about"], "untraced_ops": base, "rows": rows, "failed": failed,
            "cmd": " ".join(c.replace(ROOT + "/", "") for c in cmd)}


# The real-server suite (tools/servers/, docs/servers.md): Debian's servers on
# loopback under their own load clients. Each is started once; each round
# runs the load client untraced, then under parktrace (after TRACER_SETTLE
# s of load under it), and (Tomcat, ZooKeeper, Jetty) on a second instance
# of the same server started with JFR.
SERVERS_DIR = os.path.join(ROOT, "tools", "servers")
SERVER_SECONDS = float(os.environ.get("BENCH_SERVER_SECONDS", "5"))
SERVER_WARMUP = 2       # seconds of load on each instance before the rounds
# Seconds of load, not measured, under each freshly started tracer before
# its round: its first seconds find the JVM and name every stack and
# blocker, work JFR's instance did once before the rounds (it runs them
# all). Without it Tomcat's CPU per operation charged parktrace 3.8-5.0% of
# a core of start-up work in each 5 s round.
TRACER_SETTLE = 2
SERVERS = [
    # deep: issue 16's deep-stack servers, whose mean BPF run time per event
    # is held to 1 us (the others are shown, their p99 held to 20 us).
    {"module": "postgres", "cls": "Postgres", "system_wide": True, "deep": True,
     "about": "PostgreSQL 15, `pgbench -c 8 -j 2` (TPC-B like, scale 2) over TCP"},
    {"module": "mariadb", "cls": "MariaDB",
     "about": "MariaDB 10.11, `sysbench oltp_read_write` with 16 threads (4 tables of 10 000 rows)"},
    {"module": "tomcat", "cls": "Tomcat", "jfr": True, "deep": True, "floor": 0.99,
     "about": "Tomcat 10.1, `wrk -t2 -c16` on a servlet that takes one shared `ReentrantLock`"},
    # ZkLoad's JVM start and its 4 sessions take about 1.5 s of its time.
    {"module": "zookeeper", "cls": "ZooKeeper", "jfr": True, "extra_s": 1, "deep": True,
     "about": "ZooKeeper 3.8 standalone, `ZkLoad`: 16 threads over 4 sessions, synchronous "
     "setData/getData and ephemeral create + delete"},
    # The overhead table's Jetty, started once: started afresh for every run
    # its untraced throughput swung by a third. System-wide, as parktrace's
    # defaults run.
    # Its JIT takes longer than the others' 2 s to settle: 63k, 81k and 70k
    # requests/s untraced in three 5 s rounds after it.
    {"module": "jetty", "cls": "Jetty", "jfr": True, "deep": True, "floor": 0.99, "system_wide": True,
     "warmup_s": 15, "extra_s": 5,
     "about": "Jetty 9, the overhead table's `JettyHello` (16 threads, a shared synchronized map), "
     "`wrk -t2 -c32`; parktrace system-wide"},
    {"module": "memcached", "cls": "Memcached",
     "about": "memcached 1.6 (4 threads), `memcaslap -T 2 -c 32` (9 gets to 1 set)"},
    # Embedded databases (issue 37): the database lives in the load's JVM,
    # a new one each run, so parktrace runs system-wide and finds it.
    {"module": "h2", "cls": "H2", "jfr": True, "system_wide": True, "extra_s": 1,
     "about": "H2 2.1 embedded (Debian's libh2-java), `EmbeddedDbLoad`: 8 JDBC threads of short "
     "transactions on 16 hot rows (row locks: `Object.wait` on a transaction); parktrace system-wide"},
    {"module": "hsqldb", "cls": "HSQLDB", "jfr": True, "system_wide": True, "extra_s": 1,
     "about": "HSQLDB 2.6 embedded (Debian's libhsqldb-java, MVCC), `EmbeddedDbLoad` as for H2; "
     "parktrace system-wide"},
]


def machine_busy():
    """CPU seconds the whole machine has been busy (every CPU, all but idle
    and iowait; guest time is inside user already)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def run_load(server, seconds):
    """One run of SERVER's load client for about SECONDS, to its end; its
    throughput as it reports it."""
    p = server.load(seconds)
    try:
        p.wait(timeout=seconds + 60)
    except subprocess.TimeoutExpired:
        server.end_load(p)
        raise RuntimeError(f"{server.name}: the load client ran {seconds + 60:.0f} s, past its {seconds} s")
    out = server.load_output(p)
    if p.returncode:
        raise RuntimeError(f"{server.name}: the load client exited {p.returncode}: {out.strip()[-400:]}")
    return server.throughput(out)


def server_overhead(spec):
    """SPEC's server started once (and, with JFR, a second instance), warmed
    up, then ROUNDS rounds of: load untraced, load under parktrace (-p the
    server's processes, or system-wide where they come and go), load on the
    JFR instance. Ratios pair each traced run with the same round's
    untraced one."""
    if SERVERS_DIR not in sys.path:
        sys.path.insert(0, SERVERS_DIR)
    cls = getattr(importlib.import_module(spec["module"]), spec["cls"])
    seconds = SERVER_SECONDS + spec.get("extra_s", 0)
    res = {"server": cls.name, "about": spec["about"], "seconds": seconds, "unit": cls.throughput_unit,
           "system_wide": bool(spec.get("system_wide")), "deep": bool(spec.get("deep")),
           "floor": spec.get("floor")}
    rec = os.path.join(TMP, f"{cls.name}.jfr")
    try:
        with contextlib.ExitStack() as stack:
            t0 = time.time()
            s = stack.enter_context(cls())
            instances = [s]
            if spec.get("jfr"):
                jfr_s = stack.enter_context(cls(jvm_flags=[
                    f"-XX:StartFlightRecording:filename={rec},dumponexit=true,settings={JFC}"]))
                instances.append(jfr_s)
            log(f"servers: {cls.name} ready in {time.time() - t0:.1f} s; warm-up")
            for inst in instances:
                run_load(inst, spec.get("warmup_s", SERVER_WARMUP))
            target = [] if spec.get("system_wide") else ["-p", ",".join(map(str, s.pids()))]
            res["pt_cmd"] = " ".join(["parktrace"] + PT_RUN[1:] + target)
            runs = [("untraced", s, None), ("parktrace", s, Variant("parktrace", PT_RUN + target))]
            if BASELINE_VARIANT:
                runs.append((BASELINE_VARIANT, s, Variant(BASELINE_VARIANT, VARIANTS[BASELINE_VARIANT]().cmd + target)))
            if spec.get("jfr"):
                runs.append(("JFR", jfr_s, None))
            if spec.get("floor"):       # whether the floor is reachable by any tracer on these hooks
                runs.append(("hooks alone", s, VARIANTS["hooks alone"]()))
            raw = {name: [] for name, _, _ in runs}
            # Machine CPU per operation, for rounds whose untraced runs
            # swing too far to judge by throughput (server_targets).
            cpu_op = {name: [] for name, _, _ in runs}
            for rnd in range(ROUNDS):
                for name, inst, tracer in runs:
                    if tracer:
                        tracer.start()
                    try:
                        if tracer:
                            run_load(inst, TRACER_SETTLE)
                        busy = machine_busy()
                        raw[name].append(run_load(inst, seconds))
                        cpu_op[name].append((machine_busy() - busy) / max(raw[name][-1] * seconds, 1))
                    finally:
                        if tracer:
                            tracer.stop()
                    log(f"servers: {cls.name} round {rnd + 1}/{ROUNDS}: {name} {raw[name][-1]:.0f}/s")
            # BPF run time in a load of its own: bpf_stats slows every run.
            st = Variant("parktrace --self-stats", PT_RUN + target + ["--self-stats"])
            st.start()
            try:
                busy = machine_busy()
                run_load(s, seconds)
                busy = machine_busy() - busy
            finally:
                st.stop()
            res["bpf_cost"] = bpf_cost(open(st.err.name).read(), busy)
        # Stopped: the JFR instance has written its recording (dumponexit).
        if spec.get("jfr"):
            if not os.path.exists(rec) or os.path.getsize(rec) == 0:
                raise RuntimeError(f"{cls.name}: JFR wrote no recording at {rec}")
            res["jfr_mb"] = os.path.getsize(rec) / 2 ** 20
            os.unlink(rec)
    except Exception as e:      # one server's failure leaves the others' rows
        log(f"servers: {cls.name} failed: {e}")
        res["error"] = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        return res
    base = raw["untraced"]
    res["untraced_ops"] = base
    res["rows"] = []
    for name, _, tracer in runs[1:]:
        ratios = [a / b for a, b in zip(raw[name], base)]
        cpu_ratios = [a / b for a, b in zip(cpu_op[name], cpu_op["untraced"]) if b > 0]
        res["rows"].append({"variant": name, "median": statistics.median(ratios), "min": min(ratios),
                            "max": max(ratios), "ops": raw[name], "stats": tracer.stats if tracer else [],
                            "cpu_op": statistics.median(cpu_ratios) if cpu_ratios else None})
    return res


def servers():
    return [server_overhead(spec) for spec in SERVERS if selected("servers " + spec["module"])]


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


# The (threads, blockers) configurations: the blocker sweep at 4 threads, the thread sweep at
# 100 blockers, at the same rate of waits so that only the sizes change.
SCALING = [(4, 1), (4, 100), (4, 10000), (64, 100), (1024, 100)]
SCALING_SECONDS = 10
SCALING_RATE = 20000
SCALING_SETTLE = 2
# Each size runs this many times, the run of median CPU kept: one 8 s
# steady state read 0.74-1.36% of a core at 10 000 blockers from one run
# to the next on this VM.
SCALING_RUNS = 3


def run_ns(pid):
    """CPU time a live process has run, in ns (the scheduler's own sum)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def tree_run_ns(pid):
    """run_ns over all of a live process's threads (bpftrace has several):
    /proc/TID answers for a thread as /proc/PID for a process."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            total += run_ns(int(tid))
        except (FileNotFoundError, ProcessLookupError):
            pass                # a thread that ended since the listing
    return total


def cpu_runs(r):
    """A scaling row's steady CPU: its median run, and every run when several ran."""
    runs = r.get("cpu_pct_runs", [])
    return f"{r['cpu_pct']:.2f}" + (f" ({', '.join(f'{x:.2f}' for x in runs)})" if len(runs) > 1 else "")


def scaling():
    """parktrace's own CPU (steady state: only while the workload runs, after
    attaching), peak RSS and BPF time per program run and per wait, as the
    numbers of live blockers and of threads grow."""
    rows = []
    for threads, blockers in SCALING:
        runs = sorted((scaling_run(threads, blockers) for _ in range(SCALING_RUNS)), key=lambda r: r["cpu_pct"])
        rows.append(dict(runs[len(runs) // 2], cpu_pct_runs=[r["cpu_pct"] for r in runs]))
    return rows


def scaling_run(threads, blockers):
    """One run of scaling()'s."""
    log(f"scaling: {threads} threads, {blockers} blockers")
    out = os.path.join(TMP, "scaling.txt")
    p = subprocess.Popen([PT, "-i", "1s", "-o", out, "--self-stats"], stderr=subprocess.PIPE, text=True)
    wait_attached(p, 2.0)
    # The first seconds name the new blockers (once each); the steady
    # state is the rest of the run.
    cpu0 = run_ns(p.pid)
    wlp = subprocess.Popen([MANY, "-t", str(threads), "-b", str(blockers), "-r", str(SCALING_RATE),
                            "-s", str(SCALING_SECONDS)], stdout=subprocess.PIPE, text=True)
    time.sleep(SCALING_SETTLE)
    cpu1, t1 = run_ns(p.pid), time.time()
    wl = wlp.communicate()[0]
    cpu, took = run_ns(p.pid) - cpu1, time.time() - t1
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    st = dict(re.findall(r"(\w+)=(\d+)", err))
    final = re.findall(r"final report: window \S+, (\d+) blockers, (\d+) waits, dropped_events (\d+)",
                       open(out).read())
    seen, waits, dropped = (int(x) for x in final[-1])
    bpf_ns = int(st["bpf_runs"]) * int(st["bpf_ns_per_run"])
    return {"threads": threads, "blockers": blockers,
            "waited": int(re.search(r"blockers_waited (\d+)", wl).group(1)),
            "waits_per_s": float(re.search(r"ops_per_sec (\S+)", wl).group(1)),
            "seen": seen, "waits": waits, "dropped": dropped,
            "cpu_pct": 100 * cpu / 1e9 / took, "first_cpu_s": (cpu1 - cpu0) / 1e9,
            "rss_kb": int(st["rss_kb"]),
            "bpf_ns_per_run": int(st["bpf_ns_per_run"]), "bpf_ns_per_wait": bpf_ns / max(waits, 1)}


TW = os.path.join(ROOT, "build", "workloads", "timed_waits")
UNWIND_SECONDS = 8
# 25 Python processes whose two threads each wait on an Event (a futex) in
# 10 ms steps, and 25 C ones (timed_waits: timed condition waits).
PY_WAITER = ("import threading\nev = threading.Event()\n"
             "ts = [threading.Thread(target=lambda: [ev.wait(0.01) for _ in range(600)]) for _ in range(2)]\n"
             "[t.start() for t in ts]\n[t.join() for t in ts]\n")


def unwind_memory():
    """What the kernel's unwind tables take on a busy system: parktrace
    system-wide while a MariaDB server, a JVM and 50 other processes wait
    (issue #6's sizing case), with the cost of each stack walk; twice, with
    an empty unwind cache (every table built) and with the one that run
    filled (every table read)."""
    d = tempfile.mkdtemp(dir=TMP)
    cache = os.path.join(d, "unwind-cache")
    subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={d}/data", "--user=root",
                    "--auth-root-authentication-method=normal", "--skip-test-db"], capture_output=True, check=True)
    return {"cold": unwind_busy_system(d, cache), "warm": unwind_busy_system(d, cache)}


def unwind_busy_system(d, cache):
    p = subprocess.Popen([PT, "-i", "1s", "-o", os.path.join(TMP, "unwind.txt"), "--self-stats",
                          "--unwind-cache", cache], stderr=subprocess.PIPE, text=True)
    wait_attached(p, 2.0)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [subprocess.Popen(["mariadbd", "--no-defaults", f"--datadir={d}/data", f"--socket={d}/sock",
                               "--skip-networking", "--user=root", f"--pid-file={d}/pid"], **quiet),
             subprocess.Popen(java("ThreadPool", "-s", str(UNWIND_SECONDS - 1), "-t", "4", "-q", "16"), **quiet)]
    procs += [subprocess.Popen(["python3", "-c", PY_WAITER], **quiet) for _ in range(25)]
    procs += [subprocess.Popen([TW, "-t", "500", "-w", "200"], **quiet) for _ in range(25)]
    time.sleep(UNWIND_SECONDS)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    for q in procs:
        q.terminate()
    for q in procs:
        q.wait()
    st = dict(re.findall(r"(\w+)=(\d+(?:\.\d+)?)", err))
    tables = re.findall(r"(\S+)=(\d+)KiB", "".join(l for l in err.splitlines() if "unwind tables:" in l))
    return {"binaries": int(st["unwind_binaries"]), "no_cfi": int(st["unwind_no_cfi"]),
            "rows": int(st["unwind_rows"]), "table_kb": int(st["unwind_table_kb"]),
            "build_s": float(st["unwind_build_s"]), "cached": int(st["unwind_cached"]),
            "walks": int(st["unwind_walks"]), "cpu_s": float(st["cpu_s"]),
            "ns_per_walk": int(st["unwind_ns_per_walk"]), "frames_per_walk": int(st["unwind_frames_per_walk"]),
            "rss_kb": int(st["rss_kb"]), "tables": sorted(((n, int(k)) for n, k in tables), key=lambda t: -t[1])}


def json_final(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.startswith('{"type":"final"')][0]


def accuracy_jfr():
    """Park time per blocker class, parktrace against JFR's jdk.ThreadPark
    (threshold 0) recorded in the very same JVM (ParkMix: six classes)."""
    rows = []
    for rnd in range(3):
        rec = os.path.join(TMP, f"parkmix{rnd}.jfr")
        p = subprocess.run([PT, "-f", "json", "--top", "0", "--kinds", "jvm-park", "--",
                            JAVA, "-Xmx128m", f"-XX:StartFlightRecording:filename={rec},dumponexit=true,settings={JFC}",
                            "-cp", JAVA_CP, "ParkMix", "3", "600"], capture_output=True, text=True, timeout=120)
        pt = {}
        for b in json_final(p.stdout)["blockers"]:
            t = pt.setdefault(b["class"], [0, 0])
            t[0] += b["parks"]
            t[1] += b["thread_time_ns"]
        jfr = jfr_parks(rec)
        os.unlink(rec)
        for cls, (n, ns) in sorted(jfr.items()):
            if ns < 100_000_000:    # JFR's and the JDK's own odd parks
                continue
            got = pt.get(cls, [0, 0])
            rows.append({"what": cls, "run": rnd + 1, "jfr_n": n, "jfr_ns": ns, "pt_n": got[0], "pt_ns": got[1],
                         "mean_wait_ns": ns / n, "err": (got[1] - ns) / ns})
    return rows


# The thesis's patterns with preset hold times, each of which times its own
# holds too (a sleep overshoots): LargeCriticalSection's three locks, always
# contended, held 4, 16 and 64 ms; FrequentLock's frequent lock, 32 ms (its
# second lock is seldom contended, and the estimate assumes a lock that
# always is, so it is left out).
def pattern_holds(name, out):
    """(preset ms, measured mean hold ns, mean interval ns from one
    acquisition to the next) per lock, from the workload's output."""
    wl = [json.loads(line) for line in out.splitlines() if line.startswith('{"') and '"type"' not in line][-1]
    if name == "LargeCriticalSection":
        return [(h["preset_ms"], h["mean_hold_ns"], h["mean_interval_ns"]) for h in wl["holds"]]
    # FrequentLock's throughput is its frequent lock's acquisitions a second.
    ops = float(re.search(r"^ops_per_sec (\S+)", out, re.M).group(1))
    return [(32, wl["often_hold_ns"], 1e9 / ops if ops else 0)]


# FrequentLock's threads start a second late (DELAY_MS): a park made before
# parktrace has read a new JVM's layout is a futex wait, and the lock's real
# time then covers hand-offs its parks do not count (5 of 192 at first:
# +2.2%).
HOLD_PATTERNS = [("LargeCriticalSection", ["6", "3"]), ("FrequentLock", ["6", "8", "1000"])]


def accuracy_holds():
    """avg_hold_ns (the thesis's estimate, real time over completed parks)
    against the holds the workload timed, and against the preset ones."""
    rows = []
    for name, args in HOLD_PATTERNS:
        p = subprocess.run([PT, "-f", "json", "--top", "0", "--kinds", "jvm-park", "--",
                            *java(name, *args)], capture_output=True, text=True, timeout=120)
        holds = sorted(pattern_holds(name, p.stdout))
        locks = [b for b in json_final(p.stdout)["blockers"] if "ReentrantLock" in b["class"]]
        # The busiest rows are the pattern's locks; matched to the holds in
        # order of their estimates.
        locks = sorted(sorted(locks, key=lambda b: -b["parks"])[:len(holds)], key=lambda b: b["avg_hold_ns"])
        for b, (preset, measured, interval) in zip(locks, holds):
            rows.append({"what": f"{name} {b['class'].rsplit('.', 1)[-1]}", "hold_ms": preset,
                         "measured_ns": measured, "parks": b["parks"], "pt_ns": b["avg_hold_ns"],
                         "err": (b["avg_hold_ns"] - measured) / measured, "interval_ns": interval,
                         "interval_err": (b["avg_hold_ns"] - interval) / interval if interval else None,
                         "preset_err": (b["avg_hold_ns"] - preset * 1e6) / (preset * 1e6)})
    return rows


def mean_se(xs):
    """The thesis's chapter 4: mean, and standard error sigma / sqrt(N) with
    sigma the population standard deviation."""
    mu = statistics.fmean(xs)
    return mu, statistics.pstdev(xs) / math.sqrt(len(xs))


def thesis_overhead(traced, untraced):
    """1 - mu_traced / mu_untraced, and its bounds with each mean moved by
    its standard error either way (the thesis's ThroughputOverheadMin/Max)."""
    (mt, st), (mu, su) = mean_se(traced), mean_se(untraced)
    bounds = [1 - (mt + a) / (mu + b) for a in (st, -st) for b in (su, -su)]
    return 1 - mt / mu, min(bounds), max(bounds)


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


def accuracy_target(targets, what, rows, long_wait):
    """Within 5% everywhere, within 2% where waits last 1 ms or more."""
    for limit, sel in ((0.05, rows), (0.02, [r for r in rows if long_wait(r)])):
        if sel:
            worst = max(abs(r["err"]) for r in sel)
            scope = "all" if limit == 0.05 else "waits >= 1 ms"
            targets.append((f"accuracy: {what} within {limit:.0%} ({scope})", f"worst {worst * 100:.2f}%",
                            verdict(worst <= limit)))


def write(results, path):
    L = []
    L.append("# parktrace benchmarks\n")
    took = results["seconds"]
    # A re-render (tools/bench/rerender.py) keeps the run's own date.
    done = time.gmtime(results.get("finished", time.time()))
    L.append(f"Generated {time.strftime('%Y-%m-%d %H:%M UTC', done)} on {machine()} "
             f"by `{'BENCH_BASELINE=' + BASELINE + ' ' if BASELINE else ''}make bench` (`tools/bench/run.sh`, "
             f"which runs `tools/bench/bench.py`; BENCH_ROUNDS={ROUNDS}, BENCH_SECONDS={SECONDS}); the run took "
             f"{int(took // 60)} min {int(took % 60)} s.\n")
    L.append("Method: every variant runs the same workload in turn, round after round (untraced, "
             "parktrace, its other probe modes, the peer tracers, untraced, ...). A tracer is started "
             "system-wide and given time to attach (parktrace 2 s; the peer tracers until their probes "
             "are attached, from their perf-event and BPF-link descriptors, plus 0.5 s, at most 4 s), "
             "then the workload runs and reports its own throughput. "
             "Each traced run is divided by the untraced run of the same round; tables give the "
             "median of those ratios and their min-max spread, with raw operations per second below.\n")
    L.append("Variants: `parktrace -i 1s` (default probes: `sched_switch`/`sched_waking`); "
             "`parktrace -i 1s --probes uprobes` (Java parks from uprobes on `Unsafe_Park`/`Unsafe_Unpark` in "
             "libjvm, put on when parktrace finds the JVM, within 200 ms of its start and so inside "
             "the workload's warm-up; futex waits still from the scheduler); `parktrace -i 1s --probes syscalls` (the futex "
             "syscall tracepoints; Java parks then show as futex waits); `JFR`, JDK Flight Recorder inside "
             "the traced JVM (`-XX:StartFlightRecording` with a .jfc that enables `jdk.ThreadPark` and "
             "`jdk.JavaMonitorEnter` alone, threshold 0 ms, stack traces on, recording to a file in a "
             "temporary directory); `JFR default`, JFR with its shipped default settings; `bpftrace` "
             "with the equivalent futex script in `tools/bench/bench.py` (futex enter/exit timing per "
             "(pid, uaddr), count, sum and histogram); `bpftrace uprobes`, the classic JVM script "
             "(`Unsafe_Park` entry and return, `Unsafe_Unpark`); `offcputime -u` from libbpf-tools "
             "(sched_switch, user threads, stacks); `hooks alone`, two programs that do nothing on "
             "parktrace's default hooks (`tools/bench/hooks_floor.bpf.c`: tp_btf `sched_switch` and "
             "`sched_waking`, a per-CPU count each), the floor under any tracer built on them, on the C "
             "workloads, `java PingPong` and `java ThreadPool`. The C workloads run under parktrace's two futex "
             "modes, bpftrace and offcputime; the Java ones under every variant but offcputime, which "
             "only `java PingPong` keeps. JFR's cost is inside the JVM, so it has no tracer CPU or RSS "
             "of its own.\n")
    if BASELINE_VARIANT:
        L.append(f"`{BASELINE_VARIANT}` is parktrace built at git revision `{BASELINE}` "
                 "(`BENCH_BASELINE`), run like `parktrace` in the same rounds; the targets compare the two "
                 "round by round (see the notes).\n")
    # All ratios at a glance.
    names = []
    for ov in results["overhead"]:
        for r in ov["rows"]:
            if r["variant"] not in names:
                names.append(r["variant"])
    L.append("Throughput traced / untraced, median (higher is better):\n")
    L.append("| workload | " + " | ".join(names) + " |")
    L.append("|---" * (len(names) + 1) + "|")
    for ov in results["overhead"]:
        by = {r["variant"]: r for r in ov["rows"]}
        L.append(f"| `{ov['label']}` | " + " | ".join(f"{by[n]['median']:.3f}" if n in by else "-"
                                                      for n in names) + " |")
    L.append("")
    targets = []
    checks = {w["label"]: w["targets"] for w in WORKLOADS}
    for ov in results["overhead"]:
        L.append(f"\n## `{ov['label']}`\n")
        L.append(ov["about"] + f" Command: `{ov['cmd']}`.\n")
        L.append("| variant | throughput ratio (median) | min | max | CPU per operation vs untraced | "
                 "CPU per blocking wait vs untraced | tracer CPU % of one core while tracing (whole life) | tracer peak RSS | "
                 "BPF ns/run |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        for r in ov["rows"]:
            st = r["stats"]
            cpu = cpu_cell(st)
            rss = f"{max(s['rss_kb'] for s in st) / 1024:.1f} MiB" if st else "-"
            bns = str(r["bpf_ns"]) if r["bpf_ns"] else "-"
            L.append(f"| {r['variant']} | {r['median']:.3f} | {r['min']:.3f} | {r['max']:.3f} | "
                     f"{r['cpu_ratio']:.3f} | {r['switch_ratio']:.3f} | {cpu} | {rss} | {bns} |")
        for name, why in sorted(ov.get("failed", {}).items()):
            L.append(f"\n{name} did not start, so it is not in this table: {why}")
        L.append("\nRaw ops/s per round: untraced " + ", ".join(f"{x:.0f}" for x in ov["untraced_ops"]))
        for r in ov["rows"]:
            L.append(f"; {r['variant']} " + ", ".join(f"{x:.0f}" for x in r["ops"]))
        L.append("\nThe thesis's statistics (its chapter 4) over the same rounds: mean operations per second, "
                 "standard error (population standard deviation / sqrt(N)), relative standard error, and "
                 "the throughput overhead 1 - mean traced / mean untraced with its bounds (each mean moved by "
                 "its standard error either way).\n")
        L.append("| variant | mean ops/s | standard error | relative SE | overhead (bounds) |")
        L.append("|---|---|---|---|---|")
        mu, se = mean_se(ov["untraced_ops"])
        L.append(f"| untraced | {mu:.0f} | {se:.0f} | {100 * se / mu:.2f}% | - |")
        for r in ov["rows"]:
            mu, se = mean_se(r["ops"])
            o, lo, hi = thesis_overhead(r["ops"], ov["untraced_ops"])
            L.append(f"| {r['variant']} | {mu:.0f} | {se:.0f} | {100 * se / mu:.2f}% | "
                     f"{100 * o:.2f}% ({100 * lo:.2f}% ~ {100 * hi:.2f}%) |")
        for r in ov["rows"]:
            if "jfr_events" in r:
                ev = r["jfr_events"]
                park = ev.get("jdk.ThreadPark", 0)
                rest = ", ".join(f"{k} {v}" for k, v in sorted(ev.items()) if k != "jdk.ThreadPark") or "none"
                L.append(f"\nJFR's recording of the last round held {park} `jdk.ThreadPark` events with their "
                         f"stacks; other non-empty event types: {rest}.")
        L.append("\n")
        by = {r["variant"]: r for r in ov["rows"]}
        by["untraced"] = {"ops": ov["untraced_ops"]}
        for check in checks[ov["label"]]:
            targets += check(ov["label"], by)
        if BASELINE_VARIANT in by:
            targets += against_baseline(ov, by)
    if "servers" in results:
        targets += write_servers(L, results)
    if "idle" in results:
        idle = results["idle"]
        L.append("\n## Idle system, traced system-wide\n")
        L.append(f"`parktrace -d 30 -i 1s --self-stats` on the otherwise idle machine used "
                 f"{idle['total_cpu_s']:.3f} CPU seconds; a 1 s run used {idle['startup_cpu_s']:.3f} "
                 "(loading BTF, the programs, and naming the first processes seen). The steady state, the "
                 f"difference over the remaining 29 s, is {idle['cpu_pct']:.3f}% of one core. Peak RSS "
                 f"{idle['rss_kb'] / 1024:.1f} MiB.\n")
        targets.append(("idle system-wide: CPU < 0.5% of a core", f"{idle['cpu_pct']:.3f}%",
                        verdict(idle["cpu_pct"] < 0.5)))
    if "accuracy" in results:
        L.append("\n## Accuracy against the workload's own timings\n")
        L.append("`parktrace -f json -- mutex_contention -t 8 -m 3 -s 3`, 3 runs. The workload times every "
                 "`pthread_mutex_lock` that blocked and every `pthread_cond_wait`; relative error of "
                 "parktrace's `thread_time_ns` and `parks`. `avg_hold_ns` is shown against the preset hold "
                 "for scale only: `nanosleep` overshoots the preset by some 0.1 ms, and `journal_lock` has only "
                 "two threads (worker i takes mutex i % 3), so it is often free when one arrives, and the "
                 "thesis's estimate (real time / parks) assumes a lock that is always contended. The hold "
                 "estimate is checked on the thesis's own patterns below.\n")
        L.append("| blocker | preset hold | thread time error | parks error | avg hold error | workload ns | parktrace ns | workload waits | parktrace parks |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        for r in results["accuracy"]:
            hold = f"{r['hold_ms']:.1f} ms" if r["hold_ms"] else "-"
            L.append(f"| {r['what']} | {hold} | {pct(r['time_err'])} | {pct(r['parks_err'])} | {pct(r['hold_err'])} "
                     f"| {r['wl_ns']} | {r['pt_ns']} | {r['wl_n']} | {r['pt_n']} |")
        acc = results["accuracy"]
        accuracy_target(targets, "thread time vs the C workload's timings",
                        [dict(r, err=r["time_err"]) for r in acc], lambda r: r["wl_ns"] >= 1e6 * r["wl_n"])
        accuracy_target(targets, "parks vs the C workload's blocked locks",
                        [dict(r, err=r["parks_err"]) for r in acc if r["parks_err"] is not None], lambda r: False)
    if "scaling" in results:
        L.append("\n## Growth with live blockers and threads\n")
        L.append(f"`many_blockers -t T -b B -r {SCALING_RATE} -s {SCALING_SECONDS}` "
                 "(`tools/workloads/many_blockers.c`): T threads take turns over B futex words, each wait a "
                 f"`FUTEX_WAIT` that ends by its timeout, sized so that all threads together wait about "
                 f"{SCALING_RATE} times a second (timer slack makes it fewer with few threads), so the event "
                 "rate stays put while the sizes grow. parktrace runs system-wide, `parktrace -i 1s -o FILE "
                 "--self-stats` (a live view every second). Its CPU (the scheduler's run time) is given for "
                 f"the workload's first {SCALING_SETTLE} s, when every blocker is new and is named once (its "
                 "process, symbol, first stack, role), and as a share of one core over the rest of the run, "
                 "the steady state; its RSS is the peak, and BPF time comes from "
                 "`kernel.bpf_stats_enabled` (every program's run_time_ns / run_cnt, and the same total "
                 "over the waits parktrace counted).\n")
        L.append("| threads | blockers | waits/s | blockers parktrace saw | dropped events | parktrace CPU, first "
                 f"{SCALING_SETTLE} s | parktrace CPU % of one core, steady | peak RSS | BPF ns/run | BPF ns per wait |")
        L.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in results["scaling"]:
            L.append(f"| {r['threads']} | {r['blockers']} | {r['waits_per_s']:.0f} | {r['seen']} | {r['dropped']} | "
                     f"{r['first_cpu_s']:.3f} s | {cpu_runs(r)} | {r['rss_kb'] / 1024:.1f} MiB | {r['bpf_ns_per_run']} | "
                     f"{r['bpf_ns_per_wait']:.0f} |")
        if any("cpu_pct_runs" in r for r in results["scaling"]):
            L.append(f"\nEach size ran {SCALING_RUNS} times; the steady CPU is the median run's (all runs' in brackets), "
                     "and the other columns are that run's.\n")
        big = [r for r in results["scaling"] if r["blockers"] >= 10000]
        for r in big:
            targets.append((f"parktrace CPU <= 1% of a core at -i 1s with {r['blockers']} live blockers",
                            f"{r['cpu_pct']:.2f}%", verdict(r["cpu_pct"] <= 1)))
        rss = max(r["rss_kb"] for r in results["scaling"]) / 1024
        targets.append(("parktrace RSS <= 64 MiB (scaling runs)", f"{rss:.1f} MiB", verdict(rss <= 64)))

    if "unwind_memory" in results:
        u = results["unwind_memory"]
        L.append("\n## Unwind tables and stack walks\n")
        L.append(f"`parktrace -i 1s --self-stats` system-wide for {UNWIND_SECONDS} s while a MariaDB server "
                 "(`mariadbd` on a fresh data directory, idle: its background threads wait), a JVM "
                 "(`ThreadPool`), 25 Python processes (two threads waiting on an `Event`) and 25 C ones "
                 "(`timed_waits`) run, beside whatever else on the machine waits. Every process that waits "
                 "gets its mappings' tables; a binary's table is built once and shared. The run is made twice, "
                 "first with an empty unwind cache (`--unwind-cache` on a new directory: every table is built "
                 "with libdw), then with the cache that run filled (every table read back). A walk is one "
                 "user stack unwound in the kernel (a thread's cache serves the waits that repeat it); its "
                 "time is taken around the walk with `bpf_ktime_get_ns`.\n")
        runs = [("empty", u["cold"]), ("filled", u["warm"])] if "cold" in u else [("-", u)]
        L.append("| unwind cache | binaries with tables | read from the cache | without CFI | rows | "
                 "kernel memory for tables | CPU to make them | parktrace CPU, whole run | walks | ns per walk | "
                 "frames per walk | parktrace peak RSS |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name, r in runs:
            L.append(f"| {name} | {r['binaries']} | {r.get('cached', '-')} | {r['no_cfi']} | {r['rows']} | "
                     f"{r['table_kb'] / 1024:.1f} MiB | {r['build_s']:.2f} s | "
                     f"{str(round(r['cpu_s'], 2)) + ' s' if 'cpu_s' in r else '-'} | {r['walks']} | "
                     f"{r['ns_per_walk']} | {r['frames_per_walk']} | {r['rss_kb'] / 1024:.1f} MiB |")
        u = runs[0][1]
        L.append("\nThe largest tables: " + ", ".join(f"`{n}` {k} KiB" for n, k in u["tables"][:12]) + ".")
        targets.append(("unwind tables <= 32 MiB (a JVM, a MariaDB server and 50 other processes)",
                        f"{u['table_kb'] / 1024:.1f} MiB", verdict(u["table_kb"] <= 32 * 1024)))
        rss = max(r["rss_kb"] for _, r in runs) / 1024
        targets.append(("parktrace RSS <= 64 MiB (that busy system)", f"{rss:.1f} MiB", verdict(rss <= 64)))
    if "accuracy_jfr" in results:
        L.append("\n## Accuracy against JFR, per blocker class\n")
        L.append("`parktrace -f json --top 0 --kinds jvm-park -- java -XX:StartFlightRecording:... ParkMix 3 600`, "
                 "3 runs: the JVM parktrace traces also records every `jdk.ThreadPark` (threshold 0), and "
                 "park time per class is compared (classes with at least 100 ms in JFR).\n")
        L.append("| class | run | JFR parks | JFR ms | parktrace parks | parktrace ms | mean wait | error |")
        L.append("|---|---|---|---|---|---|---|---|")
        for r in results["accuracy_jfr"]:
            L.append(f"| `{r['what']}` | {r['run']} | {r['jfr_n']} | {r['jfr_ns'] / 1e6:.1f} | {r['pt_n']} | "
                     f"{r['pt_ns'] / 1e6:.1f} | {r['mean_wait_ns'] / 1e6:.2f} ms | {pct(r['err'])} |")
        accuracy_target(targets, "thread time vs JFR per class", results["accuracy_jfr"],
                        lambda r: r["mean_wait_ns"] >= 1e6)
    if "accuracy_holds" in results:
        L.append("\n## Accuracy against preset hold times\n")
        L.append("`parktrace -f json --top 0 --kinds jvm-park -- java LargeCriticalSection 6 3` and `... "
                 "FrequentLock 6 8 1000`: `avg_hold_ns` (the thesis's estimate, real time / completed parks) against "
                 "the mean hold the workload timed around each critical section (`Thread.sleep` overshoots "
                 "the preset hold by about 0.15 ms), and against the preset. FrequentLock's second lock is "
                 "left out: it is seldom contended, and the estimate assumes a lock that always is. "
                 "Real time goes on while a lock is handed over (the next holder is still asleep as the last "
                 "lets go), so the estimate is of the interval from one acquisition to the next, which the "
                 "workloads time too (FrequentLock's is its throughput's inverse). FrequentLock's threads "
                 "start a second late (its third argument): parks made before parktrace has read a new "
                 "JVM's layout are futex waits, so the lock's real time would cover hand-offs its parks do "
                 "not count (5 of 192 without the delay, +2.2%).\n")
        L.append("| lock | preset hold | hold the workload timed | interval between acquisitions | parks | "
                 "parktrace avg hold | error vs timed | error vs interval | error vs preset |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        for r in results["accuracy_holds"]:
            iv = f"{r['interval_ns'] / 1e6:.3f} ms" if r.get("interval_ns") else "-"
            L.append(f"| {r['what']} | {r['hold_ms']} ms | {r['measured_ns'] / 1e6:.3f} ms | {iv} | {r['parks']} | "
                     f"{r['pt_ns'] / 1e6:.3f} ms | {pct(r['err'])} | {pct(r.get('interval_err'))} | "
                     f"{pct(r['preset_err'])} |")
        accuracy_target(targets, "avg hold vs the holds the thesis patterns timed", results["accuracy_holds"],
                        lambda r: True)
        timed = [dict(r, err=r["interval_err"]) for r in results["accuracy_holds"] if r.get("interval_err") is not None]
        accuracy_target(targets, "avg hold vs the interval between acquisitions the thesis patterns timed", timed,
                        lambda r: True)
    L.append("\n## Targets\n")
    L.append("| target | measured | result |")
    L.append("|---|---|---|")
    for t in targets:
        L.append(f"| {t[0]} | {t[1]} | {t[2]} |")
    L.append("")
    kept = kept_sections(path)
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n" + NOTES + kept)
    return targets


def kept_sections(path):
    """The sections other tools wrote into PATH between their own
    <!-- NAME:begin --> and <!-- NAME:end --> markers (make soak's table,
    a cost study): kept, in their order, at the end of the new file."""
    try:
        old = open(path).read()
    except OSError:
        return ""
    out = ""
    for m in re.finditer(r"<!-- ([a-z0-9-]+):begin -->.*?<!-- \1:end -->\n?", old, re.S):
        out += "\n" + m.group(0).rstrip("\n") + "\n"
    return out


def put_section(name, block):
    """BLOCK as BENCHMARKS.md's section NAME, between its <!-- NAME:begin -->
    and <!-- NAME:end --> markers (kept by `make bench`, kept_sections): in
    place of the last one, else before the soak's table."""
    path = os.path.join(ROOT, "BENCHMARKS.md")
    text = open(path).read()
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    new = f"{begin}\n\n{block}\n{end}"
    if begin in text and end in text:
        text = text[:text.index(begin)] + new + text[text.index(end) + len(end):]
    else:
        text = text.replace("<!-- soak:begin -->", new + "\n\n<!-- soak:begin -->")
    with open(path, "w") as f:
        f.write(text)


def write_servers(L, results):
    """The real servers' section: per server, each variant's ratio to the
    same round's untraced run, and the raw rates."""
    L.append("\n## Real servers\n")
    first = next((r for r in results["servers"] if "error" not in r), {})
    L.append("The real-server suite (`tools/servers/`, `docs/servers.md`): Debian's servers on loopback, "
             "each started once for the section, warmed up with "
             f"{SERVER_WARMUP} s of load, then loaded round after round by their own clients "
             f"(about {first.get('seconds', SERVER_SECONDS):g} s a run; ZooKeeper's client is given 1 s "
             "more for its JVM start and sessions), untraced, then under `parktrace -i 1s -o /dev/null -p PIDS` "
             "(the server's processes; PostgreSQL's system-wide, as it forks a backend for each of "
             "pgbench's connections after parktrace has started), started 2 s before the load as above "
             f"and given {TRACER_SETTLE} s of load, not measured, before its run (its first seconds find the JVM "
             "and name every stack and blocker, which JFR's instance did once before the rounds), "
             "and for Tomcat, ZooKeeper and Jetty on a second instance of the server started with JFR "
             "(the `JFR` settings above: `jdk.ThreadPark` and `jdk.JavaMonitorEnter`, threshold 0, stacks), "
             "alive beside the first for the whole section. Throughput is the load client's own report "
             "(pgbench's tps, sysbench's transactions per second, wrk's Requests/sec, memcaslap's TPS, "
             "ZkLoad's operations per second); each traced run is divided by the same round's untraced "
             "one. Server, load client and tracer share the 2 CPUs; parktrace CPU is over its whole "
             "life, its 2 s start included. Machine CPU per operation is both CPUs' busy time during "
             "the run (`/proc/stat`, all but idle and iowait) over the operations done, divided by the "
             "same round's untraced figure: where the untraced runs swing by more than 10%, the "
             "targets below are judged on it rather than on throughput (issue 16).\n")
    L.append("| server | load | variant | throughput ratio (median) | min | max | machine CPU per op, "
             "traced / untraced (median) | untraced /s (median) | traced /s (median) | "
             "tracer CPU % of one core while tracing (whole life) | "
             "tracer peak RSS |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results["servers"]:
        if "error" in r:
            L.append(f"| {r['server']} | {r['about']} | not run: {r['error'].replace('|', '/')} "
                     "| - | - | - | - | - | - | - | - |")
            continue
        for i, v in enumerate(r["rows"]):
            st = v["stats"]
            cpu = cpu_cell(st)
            rss = f"{max(x['rss_kb'] for x in st) / 1024:.1f} MiB" if st else "-"
            how = v["variant"] + (" (system-wide)" if r["system_wide"] and v["variant"] != "JFR" else "")
            head = f"| {r['server']} | {r['about']}; {r['unit']} |" if i == 0 else "| | |"
            cop = f"{v['cpu_op']:.3f}" if v.get("cpu_op") is not None else "-"
            L.append(f"{head} {how} | {v['median']:.3f} | {v['min']:.3f} | {v['max']:.3f} | {cop} | "
                     f"{statistics.median(r['untraced_ops']):.0f} | {statistics.median(v['ops']):.0f} | "
                     f"{cpu} | {rss} |")
    L.append("")
    for r in results["servers"]:
        if "error" in r:
            continue
        line = f"{r['server']}, raw rate per round: untraced " + ", ".join(f"{x:.0f}" for x in r["untraced_ops"])
        for v in r["rows"]:
            line += f"; {v['variant']} " + ", ".join(f"{x:.0f}" for x in v["ops"])
        if "jfr_mb" in r:
            line += f" (JFR's recording of all rounds: {r['jfr_mb']:.1f} MiB)"
        c = r.get("bpf_cost")
        if c:
            line += (f". BPF, in a load of its own under `--self-stats`: {c['ns']} ns a run on average, "
                     f"99th percentile {c['switch_p99']} ns for `sched_switch`, {c['waking_p99']} ns for "
                     "`sched_waking`")
        L.append(line + ".\n")
    return server_targets(results["servers"])


def server_targets(servers):
    """Issue 16 on the real servers: the deep-stack ones' mean BPF run time,
    every one's p99, Tomcat's throughput and parktrace ahead of JFR."""
    targets = []
    for r in servers:
        if "error" in r:
            continue
        by = {v["variant"]: v for v in r["rows"]}
        by["untraced"] = {"ops": r["untraced_ops"]}
        by["parktrace"] = dict(by["parktrace"], bpf_cost=r.get("bpf_cost"))
        if r.get("floor"):
            targets.append(floor_target(r["server"], by, r["floor"], "cpu_op"))
        if "JFR" in by:
            targets.append(ahead_target(r["server"], by, "JFR", "parktrace ahead of JFR (threshold 0)", "cpu_op"))
        c = r.get("bpf_cost")
        if not c:
            continue
        if r.get("deep"):
            targets.append((f"{r['server']}: mean BPF run time per event <= 1 us", f"{c['ns']} ns",
                            verdict(c["ns"] <= 1000)))
        p99 = max(c["switch_p99"], c["waking_p99"])
        targets.append((f"{r['server']}: BPF run time p99 <= 20 us", f"{p99} ns", verdict(0 < p99 <= P99_LIMIT_NS)))
    return targets


NOTES = open(os.path.join(ROOT, "tools", "bench", "notes.md")).read()


def selected(name):
    return not ONLY or any(o in name.lower() for o in ONLY)


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("bench: needs root")
    results = {"overhead": [overhead(w) for w in WORKLOADS if selected(w["label"])]}
    if any(selected("servers " + spec["module"]) for spec in SERVERS):
        results["servers"] = servers()
    if selected("idle"):
        log("idle system")
        results["idle"] = idle_cost()
    if selected("scaling"):
        results["scaling"] = scaling()
    if selected("unwind"):
        log("unwind tables on a busy system")
        results["unwind_memory"] = unwind_memory()
    if selected("accuracy"):
        log("accuracy")
        results["accuracy"] = accuracy()
        log("accuracy against JFR")
        results["accuracy_jfr"] = accuracy_jfr()
        log("accuracy against preset holds")
        results["accuracy_holds"] = accuracy_holds()
    results["seconds"] = time.time() - T0
    results["finished"] = time.time()
    log("done")
    suffix = ".partial" if ONLY else ""
    json.dump(results, open(os.path.join(ROOT, "build", f"bench-results{suffix}.json"), "w"), indent=1)
    out = os.path.join(ROOT, "build", "BENCHMARKS.partial.md") if ONLY else os.path.join(ROOT, "BENCHMARKS.md")
    for t in write(results, out):
        print(f"{t[2]} {t[0]}: {t[1]}")
    print(f"wrote {out}")
    shutil.rmtree(TMP, ignore_errors=True)
