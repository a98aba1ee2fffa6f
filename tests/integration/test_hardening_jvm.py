#!/usr/bin/python3
"""Issue 12, the JVM side: traps an unprivileged user (nobody) sets for a root
parktrace. Each test sets its trap as nobody, runs parktrace as root with -d,
and checks that it ends in time, reports, exits 0 and touches nothing it
should not."""
import atexit
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

FAKE = os.path.join(BUILD, "workloads", "fake_jvm")
GRACE = 10   # seconds past -d a run may take


def public_dir():
    """A directory nobody can read and run from (the harness's TMP is root's)."""
    d = tempfile.mkdtemp(prefix="pt-hard-jvm-", dir="/tmp")
    os.chmod(d, 0o755)
    atexit.register(shutil.rmtree, d, True)
    return d


def start_fakes(modes):
    """Fake JVMs (tools/workloads/fake_jvm.c) run as nobody from a file named
    libjvm.so; returns them once each has said it is ready."""
    d = public_dir()
    lib = os.path.join(d, "libjvm.so")
    shutil.copy(FAKE, lib)
    os.chmod(lib, 0o755)
    procs = [subprocess.Popen(AS_NOBODY + [lib, m], stdout=subprocess.PIPE, text=True) for m in modes]
    for p in procs:
        check(p.stdout.readline().strip() == "ready", "a fake JVM did not start")
    return procs


def stop(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def stop_jvm(jvm):
    """Ends a JVM the way that lets it remove its attach socket."""
    jvm.terminate()
    try:
        jvm.wait(timeout=10)
    except subprocess.TimeoutExpired:
        jvm.kill()
        jvm.wait()
    for leftover in (f"/tmp/.java_pid{jvm.pid}", f"/tmp/.attach_pid{jvm.pid}"):
        if os.path.lexists(leftover):
            os.unlink(leftover)


def run_in_time(args, seconds):
    """parktrace ARGS with -d SECONDS: must end within GRACE more seconds."""
    t0 = time.monotonic()
    p = subprocess.Popen(pt_cmd(["-d", f"{seconds}s", "-f", "json", "--top", "0", "--self-stats", *args]),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=seconds + GRACE)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError(f"parktrace -d {seconds}s still ran after {seconds + GRACE} s")
    took = time.monotonic() - t0
    check(p.returncode == 0, f"parktrace exit {p.returncode}: {err[-500:]}")
    return final_of(json_reports(out)), err, took


@test
def hostile_vmstructs_numbers_cost_little_and_end_in_time():
    # 2^31 code heaps in unmapped memory (parktrace spun for half an hour),
    # thread lists of 65 536 entries (four such cost a core), a table of
    # unreadable names; as -p and system-wide.
    fakes = start_fakes(["heaps", "heaps", "threads", "threads", "threads", "threads", "names"])
    try:
        for args in ([arg for p in fakes for arg in ("-p", str(p.pid))], []):
            final, err, took = run_in_time(args, 2)
            st = self_stats(err)
            check(float(st["cpu_s"]) < 1.5, f"parktrace used {st['cpu_s']} s of CPU in a 2 s run with fakes")
            check(int(st["jvms_given_up"]) >= 4, f"the four fake thread lists were believed: {st}")
            check("totals" in final, "no report")
    finally:
        stop(fakes)


@test
def signals_end_a_run_with_hostile_fakes():
    fakes = start_fakes(["heaps", "threads", "names"])
    try:
        # Tracing, and three reports on: the fakes were looked at by then
        # (each report's tick considers the machine's new JVMs).
        started = start_pt_ready([])
        p, lines = started
        wait_for(lambda: len(lines) >= 3 or p.poll() is not None, "three interval reports", 20)
        p.send_signal(signal.SIGINT)
        try:
            reports, err = finish_pt(started, timeout=5)
        except subprocess.TimeoutExpired:
            raise AssertionError("parktrace ignored SIGINT with fake JVMs running")
        check(p.returncode == 0, f"exit {p.returncode}: {err[-300:]}")
        final_of(reports)
    finally:
        stop(fakes)


@test
def fakes_that_never_answer_an_attach_do_not_hold_up_the_run():
    # Each takes SIGQUIT and opens no socket: every request waits its whole
    # timeout. 3 s each, three times, for every fake held the loop for minutes.
    fakes = start_fakes(["attach"] * 12)
    try:
        final, err, took = run_in_time([], 3)
        check(took < 3 + 5, f"a 3 s run took {took:.1f} s")
        check("totals" in final, "no report")
    finally:
        stop(fakes)
    left = [f for f in os.listdir("/tmp") if f.startswith(".attach_pid") or f.startswith("perf-")
            and any(f == f"perf-{p.pid}.map" for p in fakes)]
    check(not left, f"files left in /tmp: {left}")


@test
def an_attach_reply_cannot_write_escapes_to_roots_terminal():
    fakes = start_fakes(["reply"])
    try:
        _, err, _ = run_in_time(["-p", str(fakes[0].pid)], 3)
        check("cannot get its perf map" in err, f"the fake's refusals were not said: {err[-300:]}")
        check("\x1b" not in err and "\x07" not in err, f"escapes reached stderr: {err[-300:]!r}")
    finally:
        stop(fakes)
        for p in fakes:
            if os.path.lexists(f"/tmp/.java_pid{p.pid}"):
                os.unlink(f"/tmp/.java_pid{p.pid}")


@test
def many_fake_jvms_do_not_hide_a_real_one():
    # 260 fakes of one user used to fill the 256-entry JVM table before a
    # real JVM started: its parks then stayed futex waits, without a word.
    fakes = start_fakes(["valid"] * 260)
    try:
        pt = start_pt_ready(["-d", "8s", "--top", "0", "--self-stats"])
        w = subprocess.run(["java", "-Xmx64m", "-cp", JAVA_CP, "TimedParks", "3"], capture_output=True, text=True,
                           timeout=60)
        reports, err = finish_pt(pt, timeout=8 + GRACE, stop=True)
        check(pt[0].returncode == 0, f"parktrace exit {pt[0].returncode}: {err[-300:]}")
        wl = json.loads(w.stdout.splitlines()[-1])
        final = final_of(reports)
        rows = {b["class"]: b for b in final["blockers"] if b["kind"] == "jvm-park"}
        check("TimedParks$Gate" in rows, f"the real JVM was hidden by fakes: jvm-park rows {sorted(rows)}")
        print(f"INFO {rows['TimedParks$Gate']['parks']} of {wl['gate_parks']} parks charged to the gate", flush=True)
        check(rows["TimedParks$Gate"]["parks"] >= 0.9 * wl["gate_parks"],
              f"{rows['TimedParks$Gate']['parks']} of {wl['gate_parks']} parks seen")
        st = self_stats(err)
        check(int(st["jvms_evicted"]) > 0 and "JVM table full" in err,
              f"evictions were not counted or said: {st.get('jvms_evicted')}")
    finally:
        stop(fakes)


@test
def a_jvm_read_before_its_tables_are_set_is_tracked_later():
    # Between its mapping and its relocation a libjvm's table pointers read
    # 0; between its relocation and its static initializers, its strides.
    # Read then (a JVM that had just exec'd), it was given up for good
    # ("vmStructs table has an unexpected shape") and its parks stayed
    # futex waits; it is a JVM still starting, to be read again.
    pt = start_pt_ready(["-d", "5s", "--top", "0", "--self-stats"])
    fakes = start_fakes(["late", "unset"])
    try:
        reports, err = finish_pt(pt, timeout=5 + GRACE)
        check(pt[0].returncode == 0, f"parktrace exit {pt[0].returncode}: {err[-300:]}")
        check("unexpected shape" not in err and "never finished starting" not in err,
              f"the starting fake was given up: {err[-300:]}")
        st = self_stats(err)
        check(int(st["jvms"]) >= 2, f"the fake JVMs were not both tracked once their tables were set: jvms={st.get('jvms')}")
    finally:
        stop(fakes)


def root_jvm(seconds):
    """A root JVM whose stacks have JIT-compiled frames (test_jvm.py's
    perf-map workload), so parktrace wants its perf map."""
    return subprocess.Popen(["java", "-Xmx64m", "-XX:+PreserveFramePointer", "-cp", JAVA_CP, "PingPong", "-s",
                             str(seconds)], stdout=subprocess.DEVNULL)


def as_nobody(*cmd):
    subprocess.run(AS_NOBODY + list(cmd), check=True)


@test
def a_root_jvm_never_writes_its_perf_map_through_a_planted_link():
    victim = os.path.join(public_dir(), "root-only")
    with open(victim, "w") as f:
        f.write("root's 20 bytes here")
    os.chmod(victim, 0o600)
    jvm = root_jvm(6)
    link = f"/tmp/perf-{jvm.pid}.map"
    try:
        as_nobody("ln", "-s", victim, link)
        final, err, _ = run_in_time(["-p", str(jvm.pid), "--probes", "uprobes", "--kinds", "jvm-park"], 4)
        check(open(victim).read() == "root's 20 bytes here", "the JVM wrote its perf map through the link")
        check(os.path.islink(link), "the planted link was replaced")
        check("symlink" in err, f"the refusal was not said: {err[-300:]}")
        check(any(b["kind"] == "jvm-park" for b in final["blockers"]), "no jvm-park rows")
    finally:
        stop_jvm(jvm)
        if os.path.lexists(link):
            os.unlink(link)


@test
def a_perf_map_file_planted_by_another_user_gets_no_code_map():
    jvm = root_jvm(6)
    path = f"/tmp/perf-{jvm.pid}.map"
    try:
        as_nobody("sh", "-c", f"umask 0; : > {path}")
        final, err, _ = run_in_time(["-p", str(jvm.pid), "--probes", "uprobes", "--kinds", "jvm-park"], 4)
        st = os.lstat(path)
        check(st.st_size == 0 and st.st_uid == NOBODY, f"the JVM wrote its code map into nobody's file ({st.st_size} B)")
        check(f"owned by uid {NOBODY}" in err, f"the refusal was not said: {err[-300:]}")
        check(any(b["kind"] == "jvm-park" for b in final["blockers"]), "no jvm-park rows")
    finally:
        stop_jvm(jvm)
        os.unlink(path)


@test
def attach_trigger_is_not_made_in_a_working_directory_the_jvm_cannot_write():
    # A nobody JVM whose working directory is root's: the trigger goes to its
    # /tmp (HotSpot looks there too), and attaching still works.
    cwd = public_dir()
    before = os.stat(cwd).st_mtime_ns
    folded = os.path.join(TMP, "jvm-as-nobody.txt")
    jvm = subprocess.Popen(AS_NOBODY + ["java", "-Xmx64m", "-XX:+PreserveFramePointer", "-cp", JAVA_CP, "PingPong",
                                     "-s", "7"], cwd=cwd, stdout=subprocess.DEVNULL)
    try:
        wait_mapped(jvm.pid, "/libjvm.so")
        _, err, _ = run_in_time(["-p", str(jvm.pid), "--probes", "uprobes", "--kinds", "jvm-park",
                                 "--collapsed", folded], 5)
        check(os.stat(cwd).st_mtime_ns == before and not os.listdir(cwd),
              f"parktrace created files in the JVM's working directory: {os.listdir(cwd)}")
        check("cannot get its perf map" not in err, f"attaching through /tmp failed: {err[-300:]}")
        stacks = open(folded).read()
        check("PingPong.lambda$main$" in stacks, "no Java frames named from the perf map")
        check(not os.path.exists(f"/tmp/.attach_pid{jvm.pid}"), "the trigger was left in /tmp")
    finally:
        stop_jvm(jvm)


if __name__ == "__main__":
    main()
