#!/usr/bin/python3
"""--listen ADDR:PORT (docs/contract/cli.md, "Fleet endpoints"): /metrics checked by
promtool and scraped by a real Prometheus server, /debug/pprof/mutex and
/block read by go tool pprof, all held against the workload's own timing;
GET only, the one address, bad addresses in one line, and a stalled client
that does not stall the tracer."""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

GO = "/usr/bin/go"
SAMPLE = re.compile(r"^\s+(\d+)\s+(\d+):((?:\s+\d+)*)\s*$")
LABEL = re.compile(r"(\w+):\[([^\]]*)\]")
SERIES = re.compile(r'^(\w+)\{comm="([^"]*)",container="[^"]*",kind="([^"]*)",class="([^"]*)",role="(lock|wait)"\} (\S+)$')


def answers(url):
    try:
        return get(url)[0] == 200
    except OSError:
        return False


def served(url, headers):
    """URL answers 200 to a request with HEADERS (False while not listening)."""
    try:
        return get(url, headers=headers)[0] == 200
    except OSError:
        return False


def get(url, method="GET", timeout=10, headers=None):
    """(status, body) of one request."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method, headers=headers or {}),
                                    timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def go_pprof(*args):
    env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"), PPROF_TMPDIR=TMP)
    return subprocess.run([GO, "tool", "pprof", *args], capture_output=True, text=True, timeout=120, env=env)


def token_file(mode=0o600):
    """A bearer token in a file of root's with MODE: (path, token)."""
    path = os.path.join(TMP, f"token-{time.monotonic_ns()}")
    token = os.urandom(24).hex()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, (token + "\n").encode())
    os.close(fd)
    os.chmod(path, mode)
    return path, token


def fetched(url, token):
    """URL's body fetched with the bearer TOKEN, kept in a file for go
    tool pprof (which sends no Authorization header of its own)."""
    status, body = get(url, headers={"Authorization": f"Bearer {token}"})
    check(status == 200, f"GET {url} with the token: HTTP {status} {body[:200]!r}")
    path = os.path.join(TMP, f"fetched-{time.monotonic_ns()}.pb.gz")
    open(path, "wb").write(body)
    return path


def raw_samples(text):
    samples, cur, on = [], None, False
    for line in text.splitlines():
        if line.startswith("Samples:"):
            on = True
        elif on and (line.startswith("Locations") or line.startswith("Mappings")):
            break
        elif on and SAMPLE.match(line):
            m = SAMPLE.match(line)
            cur = [int(m.group(1)), int(m.group(2)), {}]
            samples.append(cur)
        elif on and cur is not None:
            cur[2].update(LABEL.findall(line))
    return samples


def series(text):
    """{(metric, comm, kind, class, role): value} of a /metrics page."""
    out = {}
    for line in text.splitlines():
        m = SERIES.match(line)
        if m:
            out[m.groups()[:5]] = float(m.group(6))
    return out


class Traced:
    """parktrace --listen over mutex_contention, which then idles TAIL_S
    seconds: while it idles, what is served stops changing and can be held
    against the workload's own report."""

    def __init__(self, tail_s=6, extra=()):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.wl_report = os.path.join(TMP, f"wl-{self.port}.json")
        self.out = os.path.join(TMP, f"reports-{self.port}.json")
        # The workload lingers, alive: a process that exits has its blockers
        # recycled, and their waits then stay on their waiters' stacks in
        # /debug/pprof/mutex (docs/fleet.md, "Endpoints").
        cmd = f"{MC} -t 8 -m 2 -s 2 -r {self.wl_report} -l {tail_s}"
        self.p = subprocess.Popen(pt_cmd(["--listen", f"127.0.0.1:{self.port}", "-i", "500ms", "-f", "json",
                                          "--top", "0", "-o", self.out, *extra, "--", "sh", "-c", cmd]),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def reports(self):
        """The reports written so far (whole lines only)."""
        try:
            text = open(self.out).read()
        except OSError:
            return 0
        return len(json_reports(text[:text.rfind("\n") + 1]))

    def wait_workload(self):
        """Waits for the workload's report, then for two more interval
        reports: the second's window began after the workload ended, so
        every wait of it was counted by then."""
        wait_for(lambda: os.path.exists(self.wl_report) and os.path.getsize(self.wl_report) > 0,
                 "the workload's report", 30)
        n = self.reports()
        wait_for(lambda: self.reports() >= n + 2, "two interval reports after the workload's end", 10)
        return json.load(open(self.wl_report))

    def finish(self, stop=False):
        """Waits for parktrace's end; with STOP, ends the workload first
        (its idle tail only served what the test has already read)."""
        if stop:
            kill_descendants(self.p.pid)
        _, err = self.p.communicate(timeout=60)
        self.err = err
        check(self.p.returncode == 0, f"parktrace exited {self.p.returncode}: {err.strip()[-300:]}")
        return final_of(json_reports(open(self.out).read()))


def within_ok(got, want, tol):
    return want > 0 and abs(got - want) <= tol * want


def mutex_seconds(wl):
    return sum(m["blocked_ns"] for m in wl["mutexes"]) / 1e9


@test
def metrics_pass_promtool_and_match_the_workload():
    t = Traced()
    try:
        # While the workload runs: its locks' CSP, each value served the
        # highest of the pthread_mutex rows of one interval report.
        csp_key = ("parktrace_critical_section_pressure", "mutex_contentio", "futex", "pthread_mutex", "lock")
        wait_for(lambda: answers(t.base + "/metrics"), "/metrics", 20)
        served = set()
        while not os.path.exists(t.wl_report):
            served.add(series(get(t.base + "/metrics")[1].decode()).get(csp_key))
            time.sleep(0.1)
        wl = t.wait_workload()
        reported = {round(max([b["csp"] for b in r["blockers"] if b["comm"] == "mutex_contentio" and
                               b["class"] == "pthread_mutex" and b["csp"] is not None] or [0]), 5)
                    for r in json_reports(open(t.out).read()) if r["type"] == "interval"}
        got = {round(c, 5) for c in served if c is not None}
        check(any(c > 0.05 for c in got), f"no CSP served while the workload ran: {served}")
        check(got <= reported | {0.0}, f"CSPs served {sorted(got)} are not the interval reports' {sorted(reported)}")
        status, body = get(t.base + "/metrics")
        check(status == 200, f"/metrics: HTTP {status}")
        text = body.decode()
        pc = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        check(pc.returncode == 0, f"promtool check metrics: {pc.stdout}{pc.stderr}")
        s = series(text)
        key = ("comm", "mutex_contentio", "futex", "pthread_mutex", "lock")
        secs = s.get(("parktrace_wait_seconds_total",) + key[1:])
        waits = s.get(("parktrace_waits_total",) + key[1:])
        check(secs is not None and waits, f"no pthread_mutex series of mutex_contentio:\n{text}")
        within(secs, mutex_seconds(wl), 0.05, "parktrace_wait_seconds_total{class=pthread_mutex}")
        cond = s.get(("parktrace_wait_seconds_total", "mutex_contentio", "futex", "pthread_cond", "wait"))
        check(cond is not None, "no pthread_cond series")
        within(cond, wl["cond"]["wait_ns"] / 1e9, 0.05, "parktrace_wait_seconds_total{class=pthread_cond}")
        # The workload is over: nobody waits on its mutexes.
        parked = s.get(("parktrace_parked_threads", "mutex_contentio", "futex", "pthread_mutex", "lock"))
        check(parked == 0, f"parktrace_parked_threads {parked} after the workload ended")
        check(s.get(csp_key) == 0, f"CSP {s.get(csp_key)} in an interval without waits")
        for name in ("parktrace_dropped_events_total", "process_cpu_seconds_total",
                     "process_resident_memory_bytes", "parktrace_critical_section_pressure",
                     "parktrace_self_cpu_seconds", "parktrace_self_drop_blockers"):
            check(re.search(rf"^{name}[ {{]", text, re.M), f"/metrics lacks {name}")
        # The kernel counts BPF runs only with --self-stats: no figure, not a 0.
        check(not re.search(r"^parktrace_self_bpf_runs ", text, re.M), "bpf_runs served without --self-stats")
        # Nothing but labels of names and kinds: no path, no command line.
        check(MC not in text and "sh -c" not in text and "/" not in "".join(re.findall(r'"[^"]*"', text)),
              "/metrics holds a path or a command line")
        # One series per (comm, kind, class, role): never per object or PID.
        check(len({k for k in s if k[0] == "parktrace_waits_total" and k[1] == "mutex_contentio"}) <= 8,
              "more series than classes")
    finally:
        final = t.finish()
    rows = [b for b in final["blockers"] if b["comm"] == "mutex_contentio" and b["class"] == "pthread_mutex"]
    within(secs, sum(b["thread_time_ns"] for b in rows) / 1e9, 0.02, "wait_seconds_total", "final JSON report")


# --self-stats's units and the base units /metrics names them in (docs/fleet.md).
BASE_UNITS = {"kb": ("bytes", 1024), "ms": ("seconds", 1e-3), "ns": ("seconds", 1e-9), "s": ("seconds", 1),
              "pct": ("ratio", 0.01)}


def in_base_units(name, value):
    """A --self-stats figure as /metrics serves it: (name, value)."""
    words = name.split("_")
    for i, w in enumerate(words):
        if w in BASE_UNITS:
            words[i], factor = BASE_UNITS[w]
            return "_".join(words), value * factor
    return name, value


def self_figures(text):
    """{name: value} of /metrics' parktrace_self_* gauges."""
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^parktrace_self_(\w+) (\S+)$", text, re.M)}


@test
def metrics_serve_every_self_stats_figure():
    # /metrics serves the figures --self-stats prints at the end, by the
    # same names: the two sets agree, and the served values are those of
    # a moment before the end (running counts no higher, sizes alike).
    t = Traced(tail_s=2, extra=("--self-stats",))
    try:
        wait_for(lambda: answers(t.base + "/metrics"), "/metrics", 20)
        t.wait_workload()
        text = get(t.base + "/metrics")[1].decode()
    finally:
        t.finish(stop=True)
    pc = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    check(pc.returncode == 0, f"promtool check metrics: {pc.stdout}{pc.stderr}")
    served = self_figures(text)
    printed = {}
    for line in t.err.splitlines():
        if line.startswith("parktrace: self "):
            for word in line.split()[2:]:
                k, _, v = word.partition("=")
                if not re.fullmatch(r"\d+x\d+ns", v):    # one BPF program's runs x mean, not a figure
                    k, value = in_base_units(k, float(v))
                    printed[k] = value
    check(printed and set(served) == set(printed),
          f"served but not printed: {sorted(set(served) - set(printed))}; "
          f"printed but not served: {sorted(set(printed) - set(served))}")
    for name in ("bpf_runs", "unwind_walks", "sched_switch_p99_seconds", "slots_touched", "rss_bytes"):
        check(0 < served[name] <= printed[name] * 1.5 + 1, f"{name}: served {served[name]}, printed {printed[name]}")
    check(served["bpf_runs"] <= printed["bpf_runs"], f"bpf_runs served {served['bpf_runs']} > {printed['bpf_runs']}")


@test
def pprof_endpoints_read_by_go_tool_pprof():
    # Stacks are served only to a token's holder (docs/security.md).
    path, token = token_file()
    t = Traced(extra=("--listen-token", path))
    try:
        wl = t.wait_workload()
        got, traces = {}, {}
        for ep in ("mutex", "block"):
            prof = fetched(f"{t.base}/debug/pprof/{ep}", token)
            r = go_pprof("-raw", prof)
            check(r.returncode == 0, f"go tool pprof -raw /debug/pprof/{ep}: {r.stderr.strip()[-300:]}")
            check("contentions/count delay/nanoseconds" in r.stdout, f"/debug/pprof/{ep}: sample types")
            got[ep] = raw_samples(r.stdout)
            check(got[ep], f"/debug/pprof/{ep}: no samples")
            top = go_pprof("-top", prof)
            check(top.returncode == 0, f"go tool pprof -top /debug/pprof/{ep}: {top.stderr.strip()[-300:]}")
            traces[ep] = go_pprof("-traces", prof).stdout
    finally:
        t.finish(stop=True)
    # Go's mutex profile charges the delay to the stack that released the
    # lock (cli.md): the unlockers' stacks, where /debug/pprof/block keeps
    # the waiters'.
    check("unlock" in traces["mutex"], f"/debug/pprof/mutex has no unlocking stack:\n{traces['mutex'][:1500]}")
    check("unlock" not in traces["block"] and "lock_wait" in traces["block"],
          f"/debug/pprof/block is not the waiters' stacks:\n{traces['block'][:1500]}")
    check(all(s[2].get("role") == "lock" for s in got["mutex"]), "/debug/pprof/mutex holds a wait-role sample")
    check(any(s[2].get("class") == "pthread_cond" for s in got["block"]), "/debug/pprof/block lacks the condvar")
    for ep in ("mutex", "block"):
        for m in wl["mutexes"]:
            ns = sum(s[1] for s in got[ep] if s[2].get("blocker") == m["name"])
            within(ns, m["blocked_ns"], 0.05, f"/debug/pprof/{ep} delay of {m['name']}")
    within(sum(s[1] for s in got["block"] if s[2].get("blocker") == wl["cond"]["name"]), wl["cond"]["wait_ns"],
           0.05, "/debug/pprof/block delay of the condvar")


@test
def prometheus_scrapes_the_workloads_series():
    if not shutil.which("prometheus"):
        skip("no prometheus")
    prom_port = free_port()
    # As the scrape job of docs/fleet.md: the token sent from credentials_file.
    path, token = token_file()
    t = Traced(tail_s=12, extra=("--listen-token", path))
    cfg = os.path.join(TMP, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                f"scrape_configs:\n  - job_name: parktrace\n    authorization:\n"
                f"      credentials_file: {path}\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{t.port}']\n")
    prom = subprocess.Popen(["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={TMP}/prom-data",
                             f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wl = t.wait_workload()
        q = 'parktrace_wait_seconds_total{comm="mutex_contentio",class="pthread_mutex",role="lock",job="parktrace"}'
        url = f"http://127.0.0.1:{prom_port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
        last = {}

        def scraped_after_the_end():
            # Prometheus' first scrape comes after its start-up, which takes
            # a few seconds on a cold store: the series once it is there,
            # from a scrape after the workload's end (its value then holds).
            try:
                status, body = get(url)
            except OSError as e:          # not listening yet
                status, body = 0, str(e).encode()
            last["status"], last["body"] = status, body
            res = json.loads(body)["data"]["result"] if status == 200 else []
            return len(res) == 1 and within_ok(float(res[0]["value"][1]), mutex_seconds(wl), 0.05)

        deadline = time.time() + 9
        while time.time() < deadline and not scraped_after_the_end():
            time.sleep(0.5)
        status, body = last["status"], last["body"]
        check(status == 200, f"Prometheus query: HTTP {status} {body[:300]}")
        res = json.loads(body)["data"]["result"]
        check(len(res) == 1, f"Prometheus has {len(res)} series for {q}: {res}")
        within(float(res[0]["value"][1]), mutex_seconds(wl), 0.05, "Prometheus' parktrace_wait_seconds_total")
        up = json.loads(get(f"http://127.0.0.1:{prom_port}/api/v1/query?query=up")[1])["data"]["result"]
        check(up and up[0]["value"][1] == "1", f"the scrape target is not up: {up}")
    finally:
        prom.terminate()
        prom.wait(timeout=30)
        t.p.terminate()
        t.p.communicate(timeout=60)


@test
def without_interval_pages_renew_every_10s():
    """The service's way: no -i. The pages come from windows of their own,
    every 10 s, and no interval report is printed."""
    port, report, out = free_port(), os.path.join(TMP, "wl-noi.json"), os.path.join(TMP, "noi.json")
    base = f"http://127.0.0.1:{port}"
    cmd = f"{MC} -t 4 -m 1 -s 1 -r {report}; sleep 13"
    p = subprocess.Popen(pt_cmd(["--listen", f"127.0.0.1:{port}", "-f", "json", "-o", out, "--", "sh", "-c", cmd]),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    key = ("parktrace_wait_seconds_total", "mutex_contentio", "futex", "pthread_mutex", "lock")
    try:
        wait_for(lambda: answers(base + "/metrics"), "/metrics", 20)
        started = time.time()
        first = series(get(base + "/metrics")[1].decode()).get(key)
        wait_for(lambda: os.path.exists(report) and os.path.getsize(report) > 0, "the workload's report", 30)
        check(first is None, f"the workload's series before any window ended: {first}")
        wait_for(lambda: series(get(base + "/metrics")[1].decode()).get(key) is not None, "a renewed page", 15)
        took = time.time() - started
        check(8 <= took <= 13, f"the page was renewed after {took:.1f} s, not about 10 s")
        wl = json.load(open(report))
        within(series(get(base + "/metrics")[1].decode())[key], mutex_seconds(wl), 0.05,
               "parktrace_wait_seconds_total without -i")
    finally:
        kill_descendants(p.pid)         # its idle tail, no longer needed
        _, err = p.communicate(timeout=60)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {err.strip()[-300:]}")
    types = [r["type"] for r in json_reports(open(out).read())]
    check(types == ["final"], f"reports written without -i: {types}")


@test
def get_only_one_address_and_bad_addresses():
    t = Traced(tail_s=3)
    try:
        t.wait_workload()
        for method in ("POST", "PUT", "DELETE", "HEAD"):
            status, _ = get(t.base + "/metrics", method)
            check(status == 405, f"{method} /metrics: HTTP {status}, not 405")
        for path in ("/", "/debug/pprof/", "/debug/pprof/profile", "/metrics/x", "/../etc/passwd"):
            status, _ = get(t.base + path)
            check(status == 404, f"GET {path}: HTTP {status}, not 404")
        status, _ = get(t.base + "/metrics?x=1")
        check(status == 200, f"GET /metrics?x=1: HTTP {status}")
        # Bound to 127.0.0.1 alone (/proc/net/tcp: hex address, port; state 0A = listening).
        listening = [l.split()[1] for l in open("/proc/net/tcp").read().splitlines()[1:]
                     if l.split()[3] == "0A" and l.split()[1].endswith(f":{t.port:04X}")]
        check(listening == [f"0100007F:{t.port:04X}"], f"listening on {listening}")
        # The address in use: one line, exit 2.
        p = run_pt(["-d", "1s", "--listen", f"127.0.0.1:{t.port}"])
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and "cannot listen on" in lines[0], f"port in use: {p}")
    finally:
        t.finish(stop=True)
    for bad in ("9465", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", "localhost:9465", "::1:9465",
                "[::1]", "127.0.0.1:94x5", ":9465"):
        p = run_pt(["-d", "1s", "--listen", bad])
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 1 and len(lines) == 1 and "invalid --listen" in lines[0],
              f"--listen {bad}: exit {p.returncode}, stderr {p.stderr!r}")


@test
def a_stalled_client_does_not_stall_the_tracer():
    t = Traced(tail_s=4)
    stalled = []
    try:
        wait_for(lambda: answers(t.base + "/metrics") and os.path.exists(t.out), "/metrics and a report", 20)
        # Half a request each, never finished, up to the connection limit.
        for _ in range(20):
            c = socket.create_connection(("127.0.0.1", t.port), timeout=5)
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            stalled.append(c)
        before = t.reports()
        wait_for(lambda: t.reports() >= before + 3, f"three interval reports while clients hang (from {before})", 10)
        # Once they are gone, it serves again.
        for c in stalled:
            c.close()
        stalled = []
        wait_for(lambda: answers(t.base + "/metrics"), "/metrics once the stalled clients left", 15)
    finally:
        for c in stalled:
            c.close()
        t.finish(stop=True)


# nobody holds as many connections as it can from two loopback addresses,
# each sending a byte of a request every 2 s (the idle timeout is 10 s),
# and opens a new one whenever one is closed.
HOLDER = r"""
import socket, sys, time
port, until = int(sys.argv[1]), time.time() + float(sys.argv[2])
conns = []
while time.time() < until:
    while len(conns) < 16:
        c = socket.socket()
        c.bind((f"127.0.0.{2 + len(conns) % 2}", 0))
        c.settimeout(0.5)
        try:
            c.connect(("127.0.0.1", port))
            c.sendall(b"G")
        except OSError:
            c.close()
            break
        conns.append(c)
    time.sleep(2)
    for c in list(conns):
        try:
            c.sendall(b"E")
        except OSError:
            conns.remove(c)
            c.close()
"""


def trickle_request(port, out):
    """Sends a request a byte a second; OUT gets whether the server closed
    it and when."""
    c = socket.create_connection(("127.0.0.1", port), timeout=20)
    t0 = time.monotonic()
    out["closed"] = False
    try:
        for ch in b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"x" * 30:
            c.sendall(bytes([ch]))
            time.sleep(1)
            if time.monotonic() - t0 > 16:
                break
    except OSError:
        out["closed"] = True
    out["took"] = round(time.monotonic() - t0, 1)
    c.close()


@test
def the_endpoint_answers_only_its_owner():
    """Issue 39: without a token, stacks are refused, a Host header that
    names anything but loopback is refused (DNS rebinding), and only
    loopback addresses can be bound; with one, every request needs it. A
    local user holding connections open from other loopback addresses,
    one byte every 2 s, no longer locks root's scraper out; and a request
    that trickles is cut at its 10 s deadline."""
    t = Traced(tail_s=20)
    holder, trickled = None, {}
    try:
        wait_for(lambda: answers(t.base + "/metrics"), "/metrics", 20)
        # A request that trickles a byte a second is cut at its deadline:
        # alongside the rest, which its 10 s would otherwise add to.
        trickle = threading.Thread(target=trickle_request, args=(t.port, trickled), daemon=True)
        trickle.start()
        status, body = get(t.base + "/debug/pprof/mutex")
        check(status == 403 and b"--listen-token" in body, f"/debug/pprof/mutex without a token: HTTP {status} {body!r}")
        status, _ = get(t.base + "/metrics", headers={"Host": f"attacker.example:{t.port}"})
        check(status == 403, f"/metrics for Host attacker.example: HTTP {status}")
        # nobody's connections, then root's scrapes among them.
        # Debian's python3 (root's PATH may lead to an interpreter nobody
        # cannot run), the script inline (TMP is root's alone).
        holder = subprocess.Popen(AS_NOBODY + ["/usr/bin/python3", "-c", HOLDER, str(t.port), "14"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        time.sleep(1)       # nobody's connections made (it takes what it can, then trickles)
        held = sum(1 for l in open("/proc/net/tcp").read().splitlines()[1:]
                   if l.split()[2].endswith(f":{t.port:04X}") and l.split()[1].startswith(("0200007F", "0300007F"))
                   and l.split()[3] == "01")
        print(f"INFO nobody holds {held} connections", flush=True)
        check(held >= 1, "nobody made no connection: the test proves nothing")
        for i in range(5):
            try:
                status, _ = get(t.base + "/metrics", timeout=5)
            except OSError as e:
                status = e
            check(status == 200, f"root's scrape {i + 1} while nobody holds connections: HTTP {status}")
            time.sleep(0.5)
        holder.kill()
        holder.wait()
        holder = None
        trickle.join(timeout=20)
        check(trickled.get("closed") and trickled["took"] < 14,
              f"a request trickling a byte a second was not cut at 10 s ({trickled})")
    finally:
        if holder:
            holder.kill()
        t.finish(stop=True)
    # Only loopback without a token; a token file others can read is refused.
    p = run_pt(["-d", "1s", "--listen", "0.0.0.0:9"])
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and "--listen-token" in lines[0], f"--listen 0.0.0.0: {p}")
    path, _ = token_file(0o644)
    p = run_pt(["-d", "1s", "--listen", "127.0.0.1:9", "--listen-token", path])
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and "mode 0600" in lines[0], f"a token file of mode 0644: {p}")


@test
def a_token_is_asked_of_every_request():
    path, token = token_file()
    t = Traced(tail_s=3, extra=("--listen-token", path))
    try:
        def served():
            try:
                return get(t.base + "/metrics", headers={"Authorization": f"Bearer {token}"})[0] == 200
            except OSError:
                return False
        wait_for(served, "/metrics with the token", 20)
        for headers, what in (({}, "no token"), ({"Authorization": f"Bearer {token[:-1]}"}, "a token cut short"),
                              ({"Authorization": f"Basic {token}"}, "another scheme")):
            for page in ("/metrics", "/debug/pprof/block"):
                status, _ = get(t.base + page, headers=headers)
                check(status == 401, f"{page} with {what}: HTTP {status}, not 401")
        status, _ = get(t.base + "/debug/pprof/block", headers={"Authorization": f"Bearer {token}"})
        check(status == 200, f"/debug/pprof/block with the token: HTTP {status}")
    finally:
        t.finish(stop=True)


# nobody's client: GETs each request of argv[2] (JSON: [path, headers])
# from BASE (argv[1]); prints their statuses as JSON (0: no answer).
CLIENT = r"""
import json, sys, urllib.error, urllib.request
out = []
for path, headers in json.loads(sys.argv[2]):
    try:
        with urllib.request.urlopen(urllib.request.Request(sys.argv[1] + path, headers=headers), timeout=10) as r:
            out.append(r.status)
    except urllib.error.HTTPError as e:
        out.append(e.code)
    except OSError:
        out.append(0)
print(json.dumps(out))
"""


def nobody_gets(base, requests):
    """{(path, what): status} of REQUESTS [(path, headers, what)] made by
    nobody (Debian's python3: root's PATH may lead to one nobody cannot run)."""
    r = subprocess.run(AS_NOBODY + ["/usr/bin/python3", "-c", CLIENT, base,
                                    json.dumps([[path, h] for path, h, _ in requests])],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"nobody's client: {r.stderr.strip()[-300:]}")
    return {(path, what): status for (path, _, what), status in zip(requests, json.loads(r.stdout))}


@test
def the_endpoint_refuses_nobody_as_it_refuses_anyone():
    """Issue 39, from the local user's side (the_endpoint_answers_only_its_owner
    asks as root): nobody, without a token, gets /metrics but 403 for
    stacks and 403 for a Host that is not loopback; with --listen-token,
    401 without the token, with a wrong one or one cut short, and 200 with
    it (the token is the gate, not the uid)."""
    pages = ("/debug/pprof/mutex", "/debug/pprof/block")
    t = Traced(tail_s=2)
    try:
        wait_for(lambda: answers(t.base + "/metrics"), "/metrics", 20)
        forged = {"Host": f"attacker.example:{t.port}"}
        got = nobody_gets(t.base, [("/metrics", {}, "its Host"), *((p, {}, "no token") for p in pages),
                                   *((p, forged, "a forged Host") for p in ("/metrics", *pages))])
    finally:
        t.finish(stop=True)
    want = {("/metrics", "its Host"): 200, **{(p, "no token"): 403 for p in pages},
            **{(p, "a forged Host"): 403 for p in ("/metrics", *pages)}}
    check(got == want, f"nobody without a token: {got}, want {want}")
    path, token = token_file()
    t = Traced(tail_s=2, extra=("--listen-token", path))
    try:
        wait_for(lambda: served(t.base + "/metrics", {"Authorization": f"Bearer {token}"}), "/metrics with the token",
                 20)
        tries = {"no token": {}, "a wrong token": {"Authorization": f"Bearer {os.urandom(24).hex()}"},
                 "a token cut short": {"Authorization": f"Bearer {token[:-1]}"},
                 "the token": {"Authorization": f"Bearer {token}"}}
        got = nobody_gets(t.base, [(p, h, what) for p in ("/metrics", *pages) for what, h in tries.items()])
    finally:
        t.finish(stop=True)
    want = {(p, what): 200 if what == "the token" else 401 for p in ("/metrics", *pages) for what in tries}
    check(got == want, f"nobody with --listen-token: {got}, want {want}")


# nobody's server of forged metrics on HOST:PORT (HTTPServer binds with
# SO_REUSEADDR); "::" is dual-stack, so it holds 127.0.0.1's port too.
FORGER = r"""
import http.server, socket, sys
host, port = sys.argv[1], int(sys.argv[2])
class Forged(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'parktrace_wait_seconds_total{comm="forged",kind="futex",class="x",role="lock"} 1e9\n'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class Server(http.server.HTTPServer):
    address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
    def server_bind(self):
        if self.address_family == socket.AF_INET6:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()
Server((host, port), Forged).serve_forever()
"""


@test
def a_port_nobody_holds_first_is_refused_in_one_line():
    """Issue 39: a local user who binds --listen's port first can serve
    forged metrics there. Run by hand (not under parktrace.socket, which
    holds the port from boot: test_install.py), parktrace must then say so
    in one line and exit 2 at once, before tracing, neither serving
    beside the forger nor going on without its endpoint. nobody holds the
    port on 127.0.0.1 itself, on 0.0.0.0 and on dual-stack [::]."""
    for host in ("127.0.0.1", "0.0.0.0", "::"):
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        forger = subprocess.Popen(AS_NOBODY + ["/usr/bin/python3", "-c", FORGER, host, str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: answers(base + "/metrics") or forger.poll() is not None, f"nobody's server on {host}", 20)
            if forger.poll() is not None:
                raise AssertionError(f"nobody's server on {host} did not start: {forger.stderr.read()[-300:]}")
            t0 = time.monotonic()
            p = run_pt(["-d", "5s", "-f", "json", "--listen", f"127.0.0.1:{port}"], timeout=30)
            took = time.monotonic() - t0
            lines = p.stderr.strip().splitlines()
            check(p.returncode == 2 and len(lines) == 1 and
                  lines[0] == f"parktrace: cannot listen on 127.0.0.1:{port}: Address already in use",
                  f"nobody holding {host}:{port}: exit {p.returncode}, stderr {p.stderr!r}")
            check(took < 3 and not p.stdout, f"nobody holding {host}:{port}: traced {took:.1f} s, wrote "
                  f"{p.stdout[:200]!r}")
            # The forger still has the port alone: no second server beside it.
            status, body = get(base + "/metrics")
            check(status == 200 and b'comm="forged"' in body, f"after parktrace's refusal: {status} {body[:200]!r}")
        finally:
            forger.kill()
            forger.wait()


NAMED_WAITER_SRC = r"""
#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>
/* named_waiter NAME THREADS: takes NAME as its command, then THREADS
 * threads contend one mutex held 5 ms at a time until it is killed. */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *hold(void *a) { (void)a; for (;;) { pthread_mutex_lock(&m); usleep(5000); pthread_mutex_unlock(&m); } }
int main(int argc, char **argv) {
    prctl(PR_SET_NAME, argv[1]);
    pthread_t t;
    for (int i = 0; i < atoi(argv[2]); i++) pthread_create(&t, NULL, hold, NULL);
    pause();
}
"""


@test
def one_user_cannot_crowd_everyone_out_of_metrics():
    """Issue 39: /metrics shows 64 commands, the rest as comm="other", by
    wait time: one user's 64 commands of longer waits pushed every other
    process into "other". A user other than root now has at most 16 of
    the 64. nobody runs 64 commands of 3 threads each on a lock; root one
    of 2 threads, which waits less than any of them."""
    d = tempfile.mkdtemp(prefix="pt-crowd-", dir="/tmp")
    os.chmod(d, 0o755)
    exe = os.path.join(d, "named_waiter")
    src = exe + ".c"
    open(src, "w").write(NAMED_WAITER_SRC)
    c = subprocess.run(["cc", "-O2", "-pthread", "-o", exe, src], capture_output=True, text=True, timeout=60)
    check(c.returncode == 0, f"compiling named_waiter: {c.stderr[-300:]}")
    os.chmod(exe, 0o755)
    port = free_port()
    procs = [subprocess.Popen(AS_NOBODY + [exe, f"crowd{i:02d}", "3"]) for i in range(64)]
    procs.append(subprocess.Popen([exe, "root_waiter", "2"]))
    pt = None
    try:
        for p in procs:
            wait_threads(p.pid, 3 if p is procs[-1] else 4)
        out = os.path.join(TMP, f"crowd-{port}.json")
        pt = subprocess.Popen(pt_cmd(["--listen", f"127.0.0.1:{port}", "-i", "500ms", "-d", "20s", "-f", "json",
                                      "--top", "0", "-o", out]), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        wait_for(lambda: os.path.exists(out) and len(json_reports(open(out).read().rpartition("\n")[0])) >= 5,
                 "five interval reports", 30)
        status, body = get(f"http://127.0.0.1:{port}/metrics")
        check(status == 200, f"/metrics: HTTP {status}")
        waits = {k[1]: v for k, v in series(body.decode()).items() if k[0] == "parktrace_wait_seconds_total"}
        crowd = sorted(c for c in waits if c.startswith("crowd"))
        print(f"INFO /metrics: {len(crowd)} of nobody's 64 commands shown, root_waiter "
              f"{waits.get('root_waiter', 0):.2f} s, other {waits.get('other', 0):.2f} s", flush=True)
        # The premise: root's command waits less than each of nobody's.
        last = json_reports(open(out).read().rpartition("\n")[0])[-1]
        per_comm = {}
        for b in last["blockers"]:
            per_comm[b["comm"]] = per_comm.get(b["comm"], 0) + b["thread_time_ns"]
        lighter = [c for c in crowd if per_comm.get(c, 0) <= per_comm.get("root_waiter", 0)]
        check(per_comm.get("root_waiter") and not lighter,
              f"root_waiter waits {per_comm.get('root_waiter', 0) / 1e9:.2f} s, not less than {lighter[:3]}")
        check("root_waiter" in waits, f"root's command is not shown: {sorted(waits)[:20]}")
        check(len(crowd) <= 16, f"{len(crowd)} of nobody's commands shown")
    finally:
        for p in procs:
            p.kill()
            p.wait()
        if pt:
            pt.send_signal(2)
            pt.communicate(timeout=30)
        shutil.rmtree(d, True)


if __name__ == "__main__":
    main()
