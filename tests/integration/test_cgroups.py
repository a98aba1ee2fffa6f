#!/usr/bin/python3
"""Cgroups (issue 41; docs/contract/cli.md, "Containers"): every row and
process carries its cgroup v2 path and the container id that path names,
`--cgroup PATH` traces only those cgroups and their descendants (filtered
in the kernel, a cgroup made after the start followed), and `--by cgroup`
makes one row per (cgroup, kind, class). The cgroups are made here, under
the machine's cgroup v2 hierarchy (/sys/fs/cgroup, or
/sys/fs/cgroup/unified on a hybrid machine), and each workload is moved
into its own before it execs, as a container runtime does."""
import json
import os
import re
import subprocess
import time
import urllib.request

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

# A Docker-made scope's name (systemd cgroup driver): the id is the container's.
CONTAINER = "5f1e" + "0123456789abcdef" * 3 + "89abcdef0123"
assert len(CONTAINER) == 64


def v2_mount():
    """Where the cgroup v2 hierarchy is mounted, from our mountinfo."""
    for line in open("/proc/self/mountinfo"):
        head, _, tail = line.partition(" - ")
        if tail.startswith("cgroup2 "):
            return head.split()[4]
    skip("no cgroup v2 hierarchy mounted")


class Cgroups:
    """A tree of cgroups of this test run, under the v2 root; removed at the end."""

    def __init__(self):
        self.mount = v2_mount()
        self.top = f"/parktrace-itest-{os.getpid()}"
        self.made = []
        self.make(self.top)

    def make(self, path):
        os.mkdir(self.mount + path)
        self.made.append(path)
        return path

    def run(self, path, argv, **kw):
        """ARGV started in cgroup PATH: its shell joins the cgroup, then execs it."""
        procs = os.path.join(self.mount + path, "cgroup.procs")
        script = f'echo $$ > {procs} && exec "$@"'
        return subprocess.Popen(["sh", "-c", script, "sh", *argv], **kw)

    def argv(self, path, argv):
        procs = os.path.join(self.mount + path, "cgroup.procs")
        return ["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", *argv]

    def close(self):
        for path in reversed(self.made):
            for _ in range(50):
                try:
                    os.rmdir(self.mount + path)
                    break
                except OSError:
                    time.sleep(0.1)   # its last process is still being reaped


def mc(report, seconds="2", threads="4"):
    return [MC, "-t", threads, "-m", "1", "-s", seconds, "-r", report]


def workload_rows(final, pid):
    return [b for b in final["blockers"] if b["pid"] == pid]


@test
def rows_and_processes_carry_their_cgroup_and_container():
    """A workload in a cgroup named as Docker's systemd driver names a
    container's scope: its rows, its process entry and its pprof samples
    say the cgroup's path and the container's id."""
    cg = Cgroups()
    try:
        scope = cg.make(f"{cg.top}/docker-{CONTAINER}.scope")
        report, prof = os.path.join(TMP, "cg-wl.json"), os.path.join(TMP, "cg.pb.gz")
        p = run_pt(["-f", "json", "--top", "0", "--pprof", prof, "--", *cg.argv(scope, mc(report))], timeout=60)
        check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-400:]}")
        wl = json.load(open(report))
        final = final_of(json_reports(p.stdout))
        rows = workload_rows(final, wl["pid"])
        check(rows, f"no row of the workload (pid {wl['pid']})")
        wrong = [(b["class"], b["cgroup"], b["container"]) for b in rows
                 if b["cgroup"] != scope or b["container"] != CONTAINER]
        check(not wrong, f"rows not in {scope} / container {CONTAINER[:12]}: {wrong}")
        check(all("ns_pid" not in b for b in rows), "a process of our own pid namespace has an ns_pid")
        procs = [q for q in final["processes"] if q["pid"] == wl["pid"]]
        check(procs and procs[0]["cgroup"] == scope and procs[0]["container"] == CONTAINER,
              f"the process entry: {procs}")
        # pprof: the samples' labels, read by pprof's own parser (Go's).
        env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"), PPROF_TMPDIR=TMP)
        r = subprocess.run(["go", "tool", "pprof", "-raw", prof], capture_output=True, text=True, timeout=120,
                           env=env)
        check(r.returncode == 0, f"go tool pprof -raw: {r.stderr[-300:]}")
        check(f"cgroup:[{scope}]" in r.stdout and f"container:[{CONTAINER}]" in r.stdout,
              f"no cgroup or container label in the profile: {r.stdout[:800]}")
    finally:
        cg.close()


@test
def cgroup_filter_keeps_exactly_its_cgroups():
    """System-wide with --cgroup A,C: of four workloads, the ones in A and
    C and the one in a child of A made after parktrace started are traced,
    wholly (their blocked lock() time, as they timed it); the one in B, a
    sibling, not at all; nor any other process of the machine: neither
    among the rows nor among the processes."""
    cg = Cgroups()
    procs = []
    try:
        a, b, c = cg.make(f"{cg.top}/a"), cg.make(f"{cg.top}/b"), cg.make(f"{cg.top}/c")
        pt = start_pt_ready(["--cgroup", f"{a},{c}", "-d", "5", "--top", "0"])
        late = cg.make(f"{a}/late")
        where = {"a": a, "b": b, "c": c, "late": late}
        reports = {n: os.path.join(TMP, f"cgf-{n}.json") for n in where}
        procs = [cg.run(path, mc(reports[n])) for n, path in where.items()]
        for q in procs:
            q.wait(timeout=30)
        got, err = finish_pt(pt, stop=True)
        check(pt[0].returncode == 0, f"parktrace exited {pt[0].returncode}: {err[-400:]}")
        final = final_of(got)
        wl = {n: json.load(open(r)) for n, r in reports.items()}
        want = {wl[n]["pid"] for n in ("a", "c", "late")}
        pids = {b_["pid"] for b_ in final["blockers"]}
        check(pids == want,
              f"rows of pids {sorted(pids)}: want only a's, c's and late's {sorted(want)} "
              f"(b's is {wl['b']['pid']}); cgroups {sorted({str(x['cgroup']) for x in final['blockers']})}")
        listed = {q["pid"] for q in final["processes"]}
        check(listed == want, f"processes {sorted(listed)}: want {sorted(want)}")
        for n in ("a", "c", "late"):
            path = where[n]
            rows = [x for x in workload_rows(final, wl[n]["pid"]) if x["class"] == "pthread_mutex"]
            check(rows and all(x["cgroup"] == path for x in rows), f"{n}: rows {[(x['class'], x['cgroup']) for x in rows]}")
            within(sum(x["thread_time_ns"] for x in rows), wl[n]["mutexes"][0]["blocked_ns"], 0.05,
                   f"{n}'s mutex thread_time_ns")
    finally:
        for q in procs:
            if q.poll() is None:
                q.kill()
                q.wait()
        cg.close()


@test
def by_cgroup_joins_the_processes_of_a_cgroup():
    """--by cgroup: two workloads in one cgroup, one in another, are two
    rows of class pthread_mutex, pid and csp null, each with its cgroup's
    blocked lock() time (its workers' mutex, as they timed it, and the
    queue's mutex that the workload does not time, a few waits at most);
    the rows add up to the totals (harness.invariants)."""
    cg = Cgroups()
    try:
        one, two = cg.make(f"{cg.top}/one"), cg.make(f"{cg.top}/two")
        reports = [os.path.join(TMP, f"byc-{i}.json") for i in range(3)]
        script = " & ".join(" ".join(f"'{x}'" for x in cg.argv(path, mc(r)))
                            for path, r in zip((one, one, two), reports)) + " & wait"
        p = run_pt(["-f", "json", "--top", "0", "--by", "cgroup", "--", "sh", "-c", script], timeout=60)
        check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-400:]}")
        final = final_of(json_reports(p.stdout))
        wl = [json.load(open(r)) for r in reports]
        rows = {x["cgroup"]: x for x in final["blockers"] if x["class"] == "pthread_mutex"}
        check(set(rows) == {one, two}, f"pthread_mutex rows of cgroups {sorted(map(str, rows))}")
        for path, members in ((one, wl[:2]), (two, wl[2:])):
            r = rows[path]
            check(r["pid"] is None and r["csp"] is None, f"{path}: pid {r['pid']}, csp {r['csp']}")
            within(r["thread_time_ns"], sum(w["mutexes"][0]["blocked_ns"] for w in members), 0.05,
                   f"{path}'s thread_time_ns")
            check(r["objects"] >= len(members), f"{path}: {r['objects']} objects for {len(members)} workloads")
    finally:
        cg.close()


@test
def text_report_has_a_cgroup_column_for_several_cgroups():
    """The text report shows a CGROUP column only when its rows come from
    more than one cgroup: a container's short id, else the path."""
    cg = Cgroups()
    try:
        plain, scope = cg.make(f"{cg.top}/plain"), cg.make(f"{cg.top}/docker-{CONTAINER}.scope")
        one = run_pt(["--top", "0", "--", *cg.argv(plain, mc(os.path.join(TMP, "txt-0.json"), "1"))])
        check(one.returncode == 0, f"parktrace exited {one.returncode}: {one.stderr[-300:]}")
        check("CGROUP" not in one.stdout, f"a CGROUP column for one cgroup:\n{one.stdout[:600]}")
        script = " & ".join(" ".join(f"'{x}'" for x in cg.argv(path, mc(os.path.join(TMP, f"txt-{i}.json"), "1")))
                            for i, path in enumerate((plain, scope), 1)) + " & wait"
        two = run_pt(["--top", "0", "--", "sh", "-c", script])
        check(two.returncode == 0, f"parktrace exited {two.returncode}: {two.stderr[-300:]}")
        check(re.search(r"^KIND +PID +COMM +CGROUP ", two.stdout, re.M), f"no CGROUP column:\n{two.stdout[:600]}")
        # The path's end is kept when it is longer than the column.
        cell = plain if len(plain) <= 24 else "~" + plain[-23:]
        check(CONTAINER[:12] in two.stdout and cell in two.stdout, f"cells (want {cell!r}):\n{two.stdout[:1200]}")
    finally:
        cg.close()


@test
def live_view_has_a_cgroup_column_for_several_cgroups():
    """The live view, as the text report: a CGROUP column once its rows
    come from two cgroups, a container's short id in its cells."""
    cg = Cgroups()
    try:
        plain, scope = cg.make(f"{cg.top}/live"), cg.make(f"{cg.top}/docker-{CONTAINER}.scope")
        script = " & ".join(" ".join(f"'{x}'" for x in cg.argv(path, mc(os.path.join(TMP, f"live-{i}.json"), "3")))
                            for i, path in enumerate((plain, scope))) + " & wait"
        screen = run_on_terminal([PT, "-i", "1s", "--", "sh", "-c", script], timeout=60).decode(errors="replace")
        check(re.search(r"KIND +PID +COMM +CGROUP ", screen), f"no CGROUP column in the live view:\n{screen[-1500:]}")
        check(CONTAINER[:12] in screen, f"no container id in the live view:\n{screen[-1500:]}")
    finally:
        cg.close()


@test
def metrics_label_a_containers_series_with_its_id():
    """/metrics: a workload in a container's cgroup has its series labelled
    container="<its id>" (series per comm and container are bounded,
    docs/fleet.md); Prometheus' own
    parser (promtool check metrics) takes the page."""
    cg = Cgroups()
    port = free_port()
    scope = cg.make(f"{cg.top}/docker-{CONTAINER}.scope")
    report = os.path.join(TMP, "metrics-ctr.json")
    p = subprocess.Popen(pt_cmd(["--listen", f"127.0.0.1:{port}", "-i", "500ms", "-o", "/dev/null", "--",
                                 *cg.argv(scope, [MC, "-t", "4", "-m", "1", "-s", "2", "-r", report, "-l", "30"])]),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}/metrics"

        def page():
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    return r.read().decode()
            except OSError:
                return ""
        wait_for(lambda: os.path.exists(report) and os.path.getsize(report) > 0, "the workload's report", 30)
        wait_for(lambda: f'container="{CONTAINER}"' in page(), "a series with the container's id", 10)
        text = page()
        mine = [l for l in text.splitlines() if f'container="{CONTAINER}"' in l]
        check(any(l.startswith("parktrace_wait_seconds_total{") and 'class="pthread_mutex"' in l for l in mine),
              f"no mutex wait series of the container: {mine[:4]}")
        promtool = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                                  timeout=60)
        check(promtool.returncode == 0, f"promtool: {promtool.stdout[-300:]} {promtool.stderr[-300:]}")
    finally:
        kill_descendants(p.pid)
        p.communicate(timeout=60)
        cg.close()


@test
def bad_cgroups_are_one_line():
    """A path that is no cgroup, or no absolute cgroup path, is one line
    on stderr and no tracing."""
    for arg, says in (("/no-such-cgroup-here", "no such cgroup"), ("relative/path", "invalid --cgroup path"),
                      ("/a/../..", "invalid --cgroup path"), (",".join(["/x"] * 9), "too many cgroups")):
        p = run_pt(["--cgroup", arg, "-d", "1"], timeout=30)
        lines = p.stderr.strip().splitlines()
        check(p.returncode != 0 and len(lines) == 1 and says in lines[0],
              f"--cgroup {arg}: exit {p.returncode}, stderr {p.stderr!r}")


if __name__ == "__main__":
    main()
