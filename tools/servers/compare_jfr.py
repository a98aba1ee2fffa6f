#!/usr/bin/python3
"""parktrace against JFR on a Java server of the suite, per kind and class,
over every Java wait (jvm-park, jvm-monitor, jvm-wait).

Starts the server (h2, hsqldb, derby, zookeeper or tomcat) with JFR
recording jdk.ThreadPark, jdk.JavaMonitorEnter and jdk.JavaMonitorWait
(jfr_classes.WAIT_JFC: threshold 0, no stacks), loads it, and after the
warm-up runs several parktrace instances on its JVM at once, one per mode
(`-p PID -d DUR -f json --top 0` plus the mode's flags). When they have
ended, it dumps JFR's recording (jcmd JFR.dump), and for each parktrace
run sums thread_time_ns and parks per (kind, class) over the final
report's blockers, beside JFR's events clipped to that run's window
(java/JfrWaits.java). JFR's count is the waits begun in the window plus
those under way at its start.

usage: compare_jfr.py [--server h2] [--load 20] [--warmup 2] [--duration 8s]
                      [--modes default,stacks-all,by-class] [--min-ms 20] [--keep DIR]
Run as root from the repository (build/parktrace)."""
import argparse
import collections
import datetime
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import JDK, ServerError  # noqa: E402
from jfr_classes import jfr_flags, jfr_waits, write_jfc  # noqa: E402

PT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "parktrace")
SERVERS = {"h2": ("h2", "H2"), "hsqldb": ("hsqldb", "HSQLDB"), "derby": ("derby", "Derby"),
           "zookeeper": ("zookeeper", "ZooKeeper"), "tomcat": ("tomcat", "Tomcat")}
MODES = {"default": [], "stacks-all": ["--stacks", "all"], "by-class": ["--by", "class"],
         "by-site": ["--by", "site"], "uprobes": ["--probes", "uprobes"]}
JAVA_KINDS = ("jvm-park", "jvm-monitor", "jvm-wait")


def binary_id(path):
    """PATH's sha256 (first 12 digits) and modification time: the build
    that was measured (a rebuild during a run is reported)."""
    import hashlib
    with open(path, "rb") as f:
        h = hashlib.sha256(f.read()).hexdigest()[:12]
    return f"sha256 {h}, built {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(os.path.getmtime(path)))}"


def epoch_ns(rfc3339):
    """parktrace's report time ("2026-11-23T20:26:24.053Z") in ns since the epoch."""
    t = datetime.datetime.strptime(rfc3339, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 10**9 + t.microsecond * 1000


def final_report(stdout):
    finals = [json.loads(line) for line in stdout.splitlines()
              if line.startswith('{"type":"final"')]
    if len(finals) != 1:
        raise RuntimeError(f"expected one final report, got {len(finals)}")
    return finals[0]


def per_class(final, pid):
    """{(kind, class): [parks, thread_time_ns, rows, objects]} over the
    final report's blockers of PID."""
    by = collections.defaultdict(lambda: [0, 0, 0, 0])
    for b in final["blockers"]:
        if b["pid"] != pid:
            continue
        v = by[(b["kind"], b["class"])]
        v[0] += b["parks"]
        v[1] += b["thread_time_ns"]
        v[2] += 1
        v[3] += b.get("objects", 1)
    return by


def compare(mode, final, pid, rec, threads, min_ms):
    """Prints MODE's table; returns its rows."""
    w1 = epoch_ns(final["time"])
    w0 = w1 - final["window_ns"]
    pt = per_class(final, pid)
    jfr = jfr_waits(rec, w0, w1)
    window_s = final["window_ns"] / 1e9
    t = final["totals"]
    java_ns = sum(v[1] for (k, _), v in pt.items() if k in JAVA_KINDS)
    print(f"\n== parktrace {mode}: window {window_s:.3f} s; totals.thread_time_ns {t['thread_time_ns'] / 1e9:.2f} s, "
          f"rest rows {t['rest']['rows']}, stacks_mode {final['totals'].get('stacks_mode', '?')}; "
          f"Java rows (jvm-*) {java_ns / 1e9:.2f} s"
          + (f"; load threads x window = {threads} x {window_s:.2f} = {threads * window_s:.2f} s" if threads else ""))
    keys = sorted(set(k for k in pt if k[0] in JAVA_KINDS) | set(jfr),
                  key=lambda k: -max(pt[k][1] if k in pt else 0, jfr.get(k, (0, 0, 0, 0))[1]
                                     + jfr.get(k, (0, 0, 0, 0))[3]))
    print(f"{'kind':11} {'class':52} {'pt rows':>7} {'pt objs':>7} {'pt parks':>9} {'pt ms':>9} "
          f"{'jfr n':>8} {'(before)':>8} {'jfr ms':>9} {'pt/jfr':>7}")
    rows = []
    for k in keys:
        p = pt[k] if k in pt else [0, 0, 0, 0]
        n, ns, nb, nsb = jfr.get(k, (0, 0, 0, 0))
        jns = ns + nsb
        if max(p[1], jns) < min_ms * 1e6:
            continue
        ratio = f"{p[1] / jns:7.2f}" if jns else "      -"
        print(f"{k[0]:11} {k[1][-52:]:52} {p[2]:7d} {p[3]:7d} {p[0]:9d} {p[1] / 1e6:9.1f} "
              f"{n + nb:8d} {nb:8d} {jns / 1e6:9.1f} {ratio}")
        rows.append({"kind": k[0], "class": k[1], "pt_rows": p[2], "pt_objects": p[3], "pt_parks": p[0],
                     "pt_ns": p[1], "jfr_count": n + nb, "jfr_before": nb, "jfr_ns": jns})
    other = collections.defaultdict(int)
    for (k, _), v in pt.items():
        if k not in JAVA_KINDS:
            other[k] += v[1]
    if other:
        print("  not compared (no JFR event): " + ", ".join(f"{k} {v / 1e6:.1f} ms" for k, v in sorted(other.items())))
    return {"mode": mode, "w0_ns": w0, "w1_ns": w1, "window_ns": final["window_ns"], "rows": rows,
            "java_ns": java_ns, "totals_thread_time_ns": t["thread_time_ns"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", default="h2", choices=sorted(SERVERS))
    ap.add_argument("--load", type=float, default=20,
                    help="seconds of load (default 20: warm-up, parktrace start-up, its window and the JFR dump)")
    ap.add_argument("--warmup", type=float, default=2, help="seconds of load before parktrace starts")
    ap.add_argument("--duration", default="8s", help="parktrace -d (default 8s)")
    ap.add_argument("--modes", default="default,stacks-all,by-class",
                    help="comma-separated, of " + ",".join(MODES) + "; all run at once")
    ap.add_argument("--min-ms", type=float, default=20, help="rows under this in both tools are left out")
    ap.add_argument("--keep", help="directory to keep the JFR recording, reports and table (JSON) in")
    a = ap.parse_args()
    modes = a.modes.split(",")
    for m in modes:
        if m not in MODES:
            ap.error(f"unknown mode {m}")
    if os.geteuid() != 0:
        sys.exit("compare_jfr.py: run as root (parktrace)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    mod, cls_name = SERVERS[a.server]
    cls = getattr(importlib.import_module(mod), cls_name)
    built = binary_id(PT)
    print(f"{PT}: {built}", flush=True)
    work = tempfile.mkdtemp(prefix="pt-compare-")
    try:
        jfc = write_jfc(os.path.join(work, "waits.jfc"))
        rec = os.path.join(work, f"{a.server}.jfr")
        with cls(jvm_flags=jfr_flags(jfc)) as s:
            load = s.load(a.load)
            time.sleep(a.warmup)
            s.check_load_alive(load)
            pid = s.pids()[0]
            print(f"{a.server}: pid {pid}, load {a.load} s, parktrace after {a.warmup} s", flush=True)
            procs = {}
            for m in modes:
                argv = [PT, "--unwind-cache", os.path.join(work, "unwind"), "-p", str(pid), "-d", a.duration,
                        "-f", "json", "--top", "0", *MODES[m]]
                print("  " + " ".join(argv), flush=True)
                procs[m] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            outs = {m: p.communicate(timeout=120) for m, p in procs.items()}
            s.check_load_alive(load)
            time.sleep(1)        # the windows' last waits end, then the recording is written
            d = subprocess.run([os.path.join(JDK, "jcmd"), str(s.proc.pid), "JFR.dump", "name=pt",
                                f"filename={rec}"], capture_output=True, text=True, timeout=60)
            if d.returncode or not os.path.exists(rec):
                raise ServerError(f"JFR.dump: {d.stdout.strip()} {d.stderr.strip()}")
            load_out = s.end_load(load)
        if binary_id(PT) != built:
            print(f"WARNING: {PT} was rebuilt during the run (now {binary_id(PT)})")
        print(f"{a.server}: load said: {' | '.join(load_out.strip().splitlines()[-2:])}")
        threads = getattr(s, "threads", None)
        results = []
        for m in modes:
            out, err = outs[m]
            if procs[m].returncode:
                print(f"\n== parktrace {m}: exited {procs[m].returncode}: {err.strip()[-400:]}")
                continue
            final = final_report(out)
            results.append(compare(m, final, pid, rec, threads, a.min_ms))
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
                with open(os.path.join(a.keep, f"{a.server}-{m}.json"), "w") as f:
                    f.write(out)
        if a.keep:
            shutil.copy(rec, a.keep)
            with open(os.path.join(a.keep, f"{a.server}-table.json"), "w") as f:
                json.dump({"server": a.server, "pid": pid, "load": load_out, "runs": results}, f, indent=1)
            print(f"\nkept in {a.keep}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
