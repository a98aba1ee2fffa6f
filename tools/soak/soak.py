#!/usr/bin/python3
"""`make soak`: parktrace traces the whole system for an hour while the
real-server suite (tools/servers/) and churn workloads run, and every five
minutes the soak writes down what a long run must keep flat: parktrace's
CPU, its RSS, its BPF maps' memory, the blockers live in the kernel's table,
those recycled, and drops (docs/soak.md).

Not part of `make test`: it takes the hour. Needs root (real BPF).

Environment: SOAK_MINUTES (60), SOAK_SAMPLE_S (300), SOAK_WARMUP_S (300: the
first sample is warm-up; flat is judged on the samples after it), SOAK_OUT
(BENCHMARKS.md: the table replaces the text between its soak markers)."""
import datetime
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, "build")
PT = os.path.join(BUILD, "parktrace")
WORK = os.path.join(BUILD, "soak")
sys.path.insert(0, os.path.join(ROOT, "tools", "servers"))
import common  # noqa: E402  (the real-server suite)

MINUTES = float(os.environ.get("SOAK_MINUTES", "60"))
SAMPLE_S = float(os.environ.get("SOAK_SAMPLE_S", "300"))
WARMUP_S = float(os.environ.get("SOAK_WARMUP_S", "300"))
OUT = os.environ.get("SOAK_OUT", os.path.join(ROOT, "BENCHMARKS.md"))
FLAT = 0.10          # after warm-up, RSS and map memory may move by 10% at most
BEGIN, END = "<!-- soak:begin -->", "<!-- soak:end -->"
SERVERS = [("postgres", "Postgres"), ("mariadb", "MariaDB"), ("tomcat", "Tomcat"),
           ("zookeeper", "ZooKeeper"), ("memcached", "Memcached")]
LOAD_S = 60          # each server's load client in turn, one at a time

stop = threading.Event()


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# Churn: new processes, short-lived threads and short-lived lock objects, one
# after another for the whole soak (each command is one run; it is run again
# as soon as it ends).
def churn_commands():
    java = os.path.join(common.JDK, "java")
    cp = os.path.join(BUILD, "java")
    return [
        ("churn_locks", [os.path.join(BUILD, "workloads", "churn_locks"), "-p", "4", "-n", "60000", "-u", "200",
                         "-r", os.path.join(WORK, "churn_locks.json")]),
        ("ThreadChurn", [java, "-cp", cp, "ThreadChurn", "30"]),
        ("ChurnLock", [java, "-cp", cp, "ChurnLock", "30"]),
        ("many_blockers", [os.path.join(BUILD, "workloads", "many_blockers"), "-t", "64", "-b", "100", "-s", "30"]),
    ]


def churn(commands, runs):
    """The churn commands one after another, again and again, until the
    soak ends; counts the runs."""
    while not stop.is_set():
        for name, argv in commands:
            with open(os.path.join(WORK, f"{name}.out"), "w") as out:
                p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
                while p.poll() is None:
                    if stop.wait(0.5):
                        os.killpg(p.pid, signal.SIGKILL)
                        p.wait()
                        return
            runs[name] = runs.get(name, 0) + 1
            if p.returncode:
                log(f"churn: {name} exited {p.returncode}")


def load_in_turn(servers, runs):
    """Each server's own load client for LOAD_S, one server after another:
    all five at once would ask 2 cores for some 25 (a load average of 50),
    and a soak is about time, not about starving everything."""
    while not stop.is_set():
        for server in servers:
            p = server.load(LOAD_S)
            while p.poll() is None:
                if stop.wait(0.5):
                    server.end_load(p)
                    return
            runs[server.name] = runs.get(server.name, 0) + 1


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])       # utime + stime


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def map_kb(pid):
    """The memlock of every BPF map PID holds a descriptor of (its fdinfo),
    as --self-stats' bpf_maps_kb counts it, read while it runs."""
    total = 0
    for fd in glob.glob(f"/proc/{pid}/fdinfo/*"):
        try:
            with open(fd) as f:
                info = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if "map_id" in info and "memlock" in info:
            total += int(info["memlock"])
    return total // 1024


def last_report(path):
    """The last whole JSON line parktrace wrote, and the waits of all."""
    last, waits = None, 0
    if not os.path.exists(path):
        return last, waits
    with open(path) as f:
        for line in f:
            if not line.endswith("\n"):
                break
            r = json.loads(line)
            if r.get("type") == "interval":
                waits += r["totals"]["waits"]
                last = r
    return last, waits


def table(samples, started, commit, runs, verdict):
    L = [BEGIN, "", "## Soak: an hour of real servers and churn", "",
         f"`make soak` (`tools/soak/soak.py`, docs/soak.md), {started} UTC, commit `{commit}`: "
         f"`parktrace -i 10s -f json` system-wide for {MINUTES:.0f} minutes while PostgreSQL (pgbench), "
         f"MariaDB (sysbench), Tomcat (wrk), ZooKeeper and memcached ran, each under its load client for "
         f"{LOAD_S} s in turn, and churn workloads came and went one after another (churn_locks: 60 000 "
         "short-lived mutexes per run; ThreadChurn and ChurnLock: JVMs of short-lived threads; "
         "many_blockers -t 64 -b 100). One row per "
         f"{SAMPLE_S / 60:.0f} minutes: CPU is parktrace's own over those minutes (% of one core); RSS and "
         "BPF map memory as read at the row's time; live blockers are those in the kernel's table then, "
         "recycled those let go since the start (kept in their sites' totals); drops are "
         "dropped_events + dropped_stacks since the start.", "",
         "| minute | CPU % | RSS MiB | BPF maps MiB | live blockers | recycled | waits so far | drops |",
         "|---|---|---|---|---|---|---|---|"]
    for s in samples:
        L.append(f"| {s['minute']:.0f} | {s['cpu_pct']:.2f} | {s['rss_kb'] / 1024:.1f} | {s['map_kb'] / 1024:.1f} | "
                 f"{s['live']} | {s['recycled']} | {s['waits']} | {s['drops']} |")
    L += ["", "Runs of each load and churn command: " + ", ".join(f"{k} {v}" for k, v in sorted(runs.items())) + ".",
          "", verdict, "", END]
    return "\n".join(L) + "\n"


def judge(samples):
    after = [s for s in samples if s["minute"] * 60 > WARMUP_S + 1]
    if len(after) < 2:
        return False, "Too few samples after warm-up to judge."
    msgs, ok = [], True
    for key, what in (("rss_kb", "RSS"), ("map_kb", "BPF map memory")):
        lo, hi = min(s[key] for s in after), max(s[key] for s in after)
        grew = (hi - after[0][key]) / after[0][key] if after[0][key] else 0
        flat = grew <= FLAT
        ok &= flat
        msgs.append(f"{what} {lo / 1024:.1f}-{hi / 1024:.1f} MiB after warm-up "
                    f"({'flat' if flat else 'NOT flat'}: {grew * 100:+.1f}% over its first value, limit {FLAT * 100:.0f}%)")
    drops = samples[-1]["drops"]
    ok &= drops == 0
    msgs.append(f"drops {drops} (want 0)")
    return ok, ("PASS" if ok else "FAIL") + ": " + "; ".join(msgs) + "."


def write_out(text):
    old = open(OUT).read() if os.path.exists(OUT) else ""
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + text + old[old.index(END) + len(END) + 1:]
    else:
        new = old + ("\n" if old and not old.endswith("\n") else "") + text
    with open(OUT, "w") as f:
        f.write(new)


def main():
    if os.geteuid() != 0:
        sys.exit("soak: needs root (real BPF)")
    os.makedirs(WORK, exist_ok=True)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    reports = os.path.join(WORK, "reports.jsonl")
    if os.path.exists(reports):      # an earlier soak's: parktrace names its own at its first report
        os.unlink(reports)
    runs, threads, servers, pt = {}, [], [], None
    try:
        for module, cls in SERVERS:
            s = getattr(__import__(module), cls)()
            s.__enter__()
            servers.append(s)
            log(f"{s.name} ready")
        pt = subprocess.Popen([PT, "-i", "10s", "-f", "json", "-o", reports, "--self-stats"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(WORK, "parktrace.err"), "w"))
        threads.append(threading.Thread(target=load_in_turn, args=(servers, runs), daemon=True))
        threads.append(threading.Thread(target=churn, args=(churn_commands(), runs), daemon=True))
        for t in threads:
            t.start()
        hz = os.sysconf("SC_CLK_TCK")
        t0 = time.monotonic()
        ticks0, samples = cpu_ticks(pt.pid), []
        while time.monotonic() - t0 < MINUTES * 60:
            time.sleep(min(SAMPLE_S, MINUTES * 60 - (time.monotonic() - t0)))
            if pt.poll() is not None:
                raise RuntimeError(f"parktrace exited {pt.returncode}: "
                                   f"{open(os.path.join(WORK, 'parktrace.err')).read()[-600:]}")
            ticks = cpu_ticks(pt.pid)
            last, waits = last_report(reports)
            tot = last["totals"] if last else {}
            s = {"minute": (time.monotonic() - t0) / 60, "cpu_pct": 100 * (ticks - ticks0) / hz / SAMPLE_S,
                 "rss_kb": status_kb(pt.pid, "VmRSS"),
                 "anon_kb": status_kb(pt.pid, "RssAnon"), "map_kb": map_kb(pt.pid), "live": tot.get("live_blockers", 0),
                 "recycled": tot.get("recycled_blockers", 0), "waits": waits,
                 "drops": tot.get("dropped_events", 0) + tot.get("dropped_stacks", 0)}
            ticks0 = ticks
            samples.append(s)
            log("sample " + json.dumps(s))
        stop.set()
        pt.send_signal(signal.SIGINT)
        pt.wait(timeout=60)
        ok, verdict = judge(samples)
        write_out(table(samples, started, commit, runs, verdict))
        log(verdict)
        return 0 if ok else 1
    finally:
        stop.set()
        if pt and pt.poll() is None:    # interrupted: parktrace detaches on SIGINT
            pt.send_signal(signal.SIGINT)
            pt.wait(timeout=60)
        for t in threads:
            t.join(timeout=30)
        for s in servers:
            s.__exit__(None, None, None)


if __name__ == "__main__":
    sys.exit(main())
