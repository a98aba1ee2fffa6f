#!/usr/bin/python3
"""The cost of --listen while scraped every 15 s, as a Prometheus server
and a profiler would (issue #18): parktrace's own CPU with and without the
endpoint, in interleaved runs over the same workload, and the time each
page takes to answer. Prints a markdown section for BENCHMARKS.md.

usage: python3 tools/bench/listen_cost.py [SECONDS] [ROUNDS]   (root)"""
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PT = os.path.join(ROOT, "build", "parktrace")
WORKLOAD = [os.path.join(ROOT, "build", "workloads", "many_blockers"), "-t", "16", "-b", "1000"]
PAGES = ["/metrics", "/debug/pprof/mutex", "/debug/pprof/block"]
SCRAPE_EVERY = 15.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(seconds, listen):
    """One run: the workload for SECONDS under parktrace, scraped when
    LISTEN; parktrace's CPU seconds and the pages' answer times."""
    wl = subprocess.Popen(WORKLOAD + ["-s", str(seconds + 5)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = free_port()
    cmd = [PT, "-d", f"{seconds}s", "-o", "/dev/null", "--self-stats"] + (["--listen", f"127.0.0.1:{port}"] if listen else [])
    pt = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    times = []
    t0 = time.monotonic()
    next_scrape = t0 + 2
    while pt.poll() is None:
        now = time.monotonic()
        if listen and now >= next_scrape and now - t0 < seconds - 1:
            for page in PAGES:
                a = time.monotonic()
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}{page}", timeout=5) as r:
                        r.read()
                    times.append((page, time.monotonic() - a))
                except OSError:
                    pass
            next_scrape += SCRAPE_EVERY
        time.sleep(0.05)
    err = pt.stderr.read()
    wl.kill()
    wl.wait()
    m = re.search(r"cpu_s=([\d.]+)", err)
    return float(m.group(1)) if m else float("nan"), times


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 45
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    plain, served, times = [], [], []
    for _ in range(rounds):
        plain.append(run(seconds, False)[0])
        cpu, t = run(seconds, True)
        served.append(cpu)
        times += t
    L = [f"Command: `python3 tools/bench/listen_cost.py {seconds:g} {rounds}`, "
         f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC. The workload: "
         f"`many_blockers -t 16 -b 1000` (16 threads over 1 000 futex words). parktrace runs {seconds:g} s "
         f"system-wide, alone, then with `--listen` while the three pages are fetched every "
         f"{SCRAPE_EVERY:g} s; {rounds} interleaved pairs.", "",
         "| | parktrace CPU (s per run, median) | % of a core |", "|---|---|---|",
         f"| without --listen | {statistics.median(plain):.3f} | {100 * statistics.median(plain) / seconds:.2f} |",
         f"| --listen, scraped every {SCRAPE_EVERY:g} s | {statistics.median(served):.3f} | "
         f"{100 * statistics.median(served) / seconds:.2f} |", "",
         "| page | fetches | median answer | slowest |", "|---|---|---|---|"]
    for page in PAGES:
        ts = [t for p, t in times if p == page]
        if ts:
            L.append(f"| `{page}` | {len(ts)} | {statistics.median(ts) * 1000:.2f} ms | {max(ts) * 1000:.2f} ms |")
    print("\n".join(L))


if __name__ == "__main__":
    main()
