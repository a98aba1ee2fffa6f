#!/usr/bin/python3
"""Issue 12, the output side: names chosen by other processes cannot attack
the reader (item 6); -o and --collapsed cannot be pointed at another file by
another user (item 7); a failed write is an error (item 9); the command line
says what is wrong in one line (item 11). Traps are set as nobody; parktrace
runs as root."""
import atexit
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

HOSTILE = os.path.join(BUILD, "workloads", "hostile_names")
# hostile_names's process name after parktrace has made it safe for a
# terminal: ESC and the byte 0xff as '?' (the reader of /proc/PID/comm stops
# at the newline that ends it); in a collapsed frame ';' becomes ':' too.
HOSTILE_COMM = "?[2J?[H;9 9?"
HOSTILE_ROOT = "?[2J?[H:9 9?"
# Its thread names as JSON gives them back: every byte that is not UTF-8 as U+FFFD.
HOSTILE_THREADS = {"t\x1b]0;pwn\x07", "row\nfake 1 2", "semi;colon;x 7", "bad\ufffd\ufffd\ufffd(", "c1\x9b2J\r"}


def run_bytes(args, timeout=60, **kw):
    """parktrace with its output as bytes: a name may not be UTF-8."""
    return subprocess.run(pt_cmd(args), capture_output=True, timeout=timeout, **kw)


def as_nobody(cmd):
    subprocess.run(AS_NOBODY + cmd,
                   check=True, timeout=10)


def sticky_dir():
    """A fresh directory like /tmp: world-writable and sticky."""
    d = tempfile.mkdtemp(prefix="pt-hard-out-", dir="/tmp")
    os.chmod(d, 0o1777)   # in /tmp, not in TMP (0700), so that nobody can get in
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    return d


def victim_file():
    """A root-only file that nothing may touch."""
    path = os.path.join(TMP, f"victim-{time.monotonic_ns()}")
    with open(path, "w") as f:
        f.write("root only\n")
    os.chmod(path, 0o600)
    return path


def one_line_error(p, want_rc, want_text, what):
    err = p.stderr if isinstance(p.stderr, str) else p.stderr.decode(errors="replace")
    lines = err.strip().splitlines()
    check(p.returncode == want_rc, f"{what}: exit {p.returncode}, wanted {want_rc}; stderr {err!r}")
    check(len(lines) == 1, f"{what}: wanted one line on stderr, got {lines!r}")
    check(lines[0].startswith("parktrace: ") and want_text in lines[0], f"{what}: message {lines[0]!r}")


def failed_at_start(args, want_text, what):
    """A bad output path fails before tracing: quickly, exit 2, one line."""
    t0 = time.monotonic()
    p = run_pt(["-d", "5s"] + args, timeout=20)
    one_line_error(p, 2, want_text, what)
    check(time.monotonic() - t0 < 3, f"{what}: failed only after {time.monotonic() - t0:.1f}s of tracing")
    return p


def unchanged(path, content, what):
    with open(path) as f:
        check(f.read() == content, f"{what}: {path} was written")


def control_bytes(data):
    return sorted({b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f})


# Item 6: names


@test
def hostile_names_reach_no_reader_raw():
    out = os.path.join(TMP, "hostile.json")
    folded = os.path.join(TMP, "hostile.folded")
    p = run_bytes(["-f", "json", "--top", "0", "-o", out, "--collapsed", folded, "--", HOSTILE, "-s", "2"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr!r}")
    raw = open(out, "rb").read()
    check(not control_bytes(raw), f"raw control bytes in the JSON: {control_bytes(raw)}")
    lines = raw.decode("utf-8").splitlines()   # strict: not UTF-8 raises
    reports = [invariants(json.loads(line)) for line in lines]
    check(len(reports) == 1 and reports[0]["type"] == "final", f"{len(reports)} JSON lines for one report")
    rows = reports[0]["blockers"]
    mutex = [r for r in rows if r["name"] == "contended"]
    check(mutex, "no row for the contended mutex")
    # The names arrive whole, escaped, not dropped.
    check(mutex[0]["comm"] == "\x1b[2J\x1b[H;9 9\ufffd", f"process name: {mutex[0]['comm']!r}")
    check(mutex[0]["first_thread"] in HOSTILE_THREADS, f"thread name: {mutex[0]['first_thread']!r}")

    data = open(folded, "rb").read()
    check(not control_bytes(data), f"control bytes in the collapsed stacks: {control_bytes(data)}")
    text = data.decode("utf-8")
    folded_lines = text.splitlines()
    check(folded_lines, "no collapsed lines")
    for line in folded_lines:
        m = re.fullmatch(r"([^ ].*;\[[a-z_]+\]) (\d+)", line)
        check(m, f"not one stack and one value: {line!r}")
        check(m.group(1).startswith(HOSTILE_ROOT + ";"), f"root frame not made safe: {line!r}")
    r = subprocess.run(["perl", FLAMEGRAPH, folded], capture_output=True, timeout=60)
    check(r.returncode == 0 and b"<svg" in r.stdout, f"flamegraph.pl failed: {r.stderr!r}")


@test
def hostile_names_in_the_text_report_and_live_view():
    p = run_bytes(["--top", "0", "--", HOSTILE, "-s", "1"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr!r}")
    check(not control_bytes(p.stdout), f"control bytes in the text report: {control_bytes(p.stdout)}")
    lines = p.stdout.decode("utf-8").splitlines()
    check(lines[0].startswith("parktrace final report"), f"header: {lines[0]!r}")
    # Rows, phase lines, and parktrace's own line before idle rows (pthread_join).
    # The wait chains (one line each, indented, after their heading) name
    # the same threads: every one is one line, ending in its end.
    at = next((i for i, l in enumerate(lines) if l.startswith("-- wait chains")), len(lines))
    chains = [l for l in lines[at + 1:] if l.startswith("  ")]
    check(all(re.search(r" \((running|runnable|sleeping|io|cycle|unknown)(: [^)]*)?\)$", l) for l in chains),
          f"a chain line that is not one: {chains!r}")
    # The header's own indented lines (the stack budget's, say) come first.
    rows = [l for l in lines[2:at] + lines[at + 1 + len(chains):]
            if not l.startswith(("-- idle housekeeping: ", "  "))]
    check(rows and all(l.startswith("futex ") or l.startswith("phase: ") for l in rows),
          f"a row that is not a row: {rows!r}")
    check(any(HOSTILE_COMM in l and "contended" in l for l in rows), f"no safe COMM in {rows!r}")

    screen = run_on_terminal([PT, "-i", "300ms", "--", HOSTILE, "-s", "1.2"])
    redraws = screen.count(b"\033[H\033[J")
    check(redraws >= 2, "no live view")
    # parktrace's own sequences (redraw, alternate screen, cursor, the
    # header's reverse video) are the only escape sequences on the terminal.
    own = (b"\033[H\033[J", b"\033[?1049h", b"\033[?1049l", b"\033[?25l", b"\033[?25h", b"\033[7m", b"\033[0m")
    rest = screen
    for seq in own:
        rest = rest.replace(seq, b"")
    check(b"\033" not in rest, "a name put an escape sequence on the terminal")
    check(b"\x9b" not in screen and b"\x07" not in screen, "a name put a control on the terminal")


def pprof_strings(path):
    """The string table of the gzip-compressed pprof profile at PATH, as
    bytes: Profile's field 6, read with no protobuf library."""
    import gzip
    data, i, out = gzip.open(path).read(), 0, []

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if b < 0x80:
                return v
    while i < len(data):
        key = varint()
        wire = key & 7
        if wire == 0:
            varint()
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n = varint()
            if key >> 3 == 6:
                out.append(data[i:i + n])
            i += n
        else:
            raise AssertionError(f"{path}: wire type {wire} at byte {i}")
    return out


# What sanitize.c makes '?': C0 and C1 controls, DEL, bidirectional controls.
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@test
def hostile_names_in_pprof_come_out_clean():
    """Issue 39: a pprof profile's names are cleaned as the text report's
    are (valid UTF-8, no control character): nobody's hostile_names, traced
    by root into --pprof, then read by go tool pprof, whose -raw and
    -traces print every name as it is."""
    go = shutil.which("go")
    if not go:
        skip("no go (Debian package golang-go)")
    prof = os.path.join(TMP, "hostile.pb.gz")
    # setpriv execs hostile_names in the process parktrace starts.
    p = run_bytes(["-f", "json", "-o", "/dev/null", "--pprof", prof, "--", *AS_NOBODY, HOSTILE, "-s", "1.5"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr!r}")
    strings = pprof_strings(prof)
    check(strings and strings[0] == b"", f"not a profile's string table: {strings[:5]}")
    for raw in strings:
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise AssertionError(f"a string of the profile is not UTF-8: {raw!r}")
        check(not UNSAFE.search(name), f"a control character in the profile: {name!r}")
    # The names arrive cleaned, not dropped; ';' is no separator in pprof.
    check(HOSTILE_COMM.encode() in strings, f"no cleaned process name among {strings[:40]}")
    env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"), PPROF_TMPDIR=TMP)
    for view in ("-raw", "-traces"):
        r = subprocess.run([go, "tool", "pprof", view, prof], capture_output=True, timeout=120, env=env)
        check(r.returncode == 0, f"go tool pprof {view}: {r.stderr[-300:]!r}")
        out = r.stdout.decode("utf-8")      # strict: not UTF-8 raises
        bad = UNSAFE.findall(out.replace("\n", "").replace("\t", ""))    # pprof's own layout aside
        check(not bad, f"go tool pprof {view} printed control characters {bad}")
        # The process name is whole on its line (no newline of its own split it).
        label = f"comm:[{HOSTILE_COMM}]" if view == "-raw" else f"comm:  {HOSTILE_COMM}"
        check(label in out, f"go tool pprof {view}: no {label!r} in {out[:600]!r}")


# Item 7: output through links and other users' files


@test
def output_symlink_planted_by_another_user_is_not_followed():
    d, victim = sticky_dir(), victim_file()
    for opt in (["-o"], ["--collapsed"]):
        link = os.path.join(d, f"out{len(opt[0])}")
        as_nobody(["ln", "-s", victim, link])
        failed_at_start(opt + [link], "symbolic link", f"{opt[0]} through nobody's link")
        unchanged(victim, "root only\n", opt[0])
        check(os.path.islink(link), f"{opt[0]}: the link was replaced or removed")
    check(sorted(os.listdir(d)) == ["out11", "out2"], f"left behind: {os.listdir(d)}")


@test
def output_directory_through_another_users_link_is_refused():
    # Issue 39: nobody's link in a sticky directory, as a directory of the
    # path: root's -o shared/rep/report.txt wrote into rootonly/. (The
    # kernel's fs.protected_symlinks stops this in a world-writable sticky
    # directory only, and only where it is on.)
    d = sticky_dir()
    rootonly = tempfile.mkdtemp(prefix="pt-rootonly-", dir=TMP)
    atexit.register(shutil.rmtree, rootonly, ignore_errors=True)
    as_nobody(["ln", "-s", rootonly, os.path.join(d, "rep")])
    for opt in (["-o"], ["--collapsed"], ["--pprof"]):
        failed_at_start(opt + [os.path.join(d, "rep", f"report{len(opt[0])}")], "another user's symbolic link",
                        f"{opt[0]} through nobody's directory link")
    check(os.listdir(rootonly) == [], f"written into the root-only directory: {os.listdir(rootonly)}")
    # Root's own links are followed: a link root made to a directory of its own.
    mine = os.path.join(TMP, f"rootlink-{time.monotonic_ns()}")
    os.symlink(rootonly, mine)
    p = run_pt(["-d", "1s", "-f", "json", "-o", os.path.join(mine, "report.json"), "--", "true"], timeout=20)
    check(p.returncode == 0 and os.listdir(rootonly) == ["report.json"],
          f"-o through root's own link: exit {p.returncode}, {p.stderr.strip()[-200:]}; {os.listdir(rootonly)}")


@test
def output_file_of_another_user_in_a_sticky_dir_is_refused():
    d = sticky_dir()
    for opt in (["-o"], ["--collapsed"]):
        path = os.path.join(d, f"report{len(opt[0])}")
        as_nobody(["sh", "-c", f"echo mine > {path}; chmod 666 {path}"])
        failed_at_start(opt + [path], "another user's file in a sticky directory", f"{opt[0]} into nobody's file")
        unchanged(path, "mine\n", opt[0])
        check(os.stat(path).st_uid == NOBODY, "nobody's file was replaced")
    # A FIFO of nobody's would hand root's report to nobody.
    fifo = os.path.join(d, "fifo")
    as_nobody(["mkfifo", "-m", "666", fifo])
    failed_at_start(["-o", fifo], "another user's file", "-o into nobody's FIFO")


@test
def output_is_replaced_whole_in_place():
    d = sticky_dir()
    out, folded = os.path.join(d, "r.txt"), os.path.join(d, "c.folded")
    with open(out, "w") as f:
        f.write("an older report, much longer than the new one " * 2000)
    old_inode = os.stat(out).st_ino
    os.link(out, os.path.join(TMP, "hardlink-to-old"))
    p = run_pt(["-d", "1s", "-o", out, "--collapsed", folded, "--", MC, "-s", "1", "-r", os.path.join(TMP, "o.json")])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    text = open(out).read()
    check(text.startswith("parktrace final report") and "older report" not in text, "report not replaced whole")
    check(os.stat(out).st_ino != old_inode, "written into the existing file, not a new one")
    check("older report" in open(os.path.join(TMP, "hardlink-to-old")).read(), "a hard link was written through")
    check(open(folded).read().count("[pthread_mutex]") > 0, "no collapsed stacks")
    check(sorted(os.listdir(d)) == ["c.folded", "r.txt"], f"temporary files left: {os.listdir(d)}")
    check(oct(os.stat(out).st_mode & 0o777) == oct(0o666 & ~current_umask()), "mode is not fopen's")


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


@test
def fifo_without_reader_fails_instead_of_hanging():
    fifo = os.path.join(TMP, "nobody-reads")
    os.mkfifo(fifo)
    failed_at_start(["-o", fifo], "no reader", "-o FIFO without a reader")


@test
def dev_null_and_stdout_still_work():
    p = run_pt(["-o", "/dev/null", "--", "true"])
    check(p.returncode == 0 and p.stdout == "", f"-o /dev/null: exit {p.returncode}, {p.stderr!r}")
    d = sticky_dir()
    for dash in (["-o", "-"], ["-o", "/dev/stdout"]):
        p = run_pt(dash + ["--", "true"], cwd=d)
        check(p.returncode == 0 and p.stdout.startswith("parktrace final report"),
              f"{dash}: exit {p.returncode}, stdout {p.stdout[:80]!r}, stderr {p.stderr!r}")
    check(os.listdir(d) == [], f"files made for '-': {os.listdir(d)}")


# Item 9: failed writes


@test
def failed_writes_exit_2_with_one_line():
    # A traced command, not the whole system: other processes' news on stderr
    # would not be parktrace's one line.
    sleep = ["--", "sleep", "1"]
    one_line_error(run_pt(["-o", "/dev/full"] + sleep), 2, "cannot write /dev/full: No space left",
                   "-o /dev/full")
    contended = ["--", MC, "-s", "1", "-r", os.path.join(TMP, "full.json")]   # some stacks to write
    report = os.path.join(TMP, "whole-report.json")
    one_line_error(run_pt(["-f", "json", "-o", report, "--collapsed", "/dev/full"] + contended), 2,
                   "cannot write /dev/full", "--collapsed /dev/full")
    check(final_of(json_reports(open(report).read())), "the report, written whole, was lost")
    with open("/dev/full", "w") as full:
        p = subprocess.run(pt_cmd(sleep), stdout=full, stderr=subprocess.PIPE, text=True, timeout=30)
    one_line_error(p, 2, "cannot write standard output", "stdout on /dev/full")
    # An interval stream stops at its first failed report.
    s = subprocess.Popen(["sleep", "30"])
    try:
        t0 = time.monotonic()
        p = run_pt(["-i", "300ms", "-o", "/dev/full", "-p", str(s.pid)])
        one_line_error(p, 2, "No space left", "-i -o /dev/full")
        check(time.monotonic() - t0 < 10, "kept tracing after a failed write")
    finally:
        s.kill()
        s.wait()


# Item 11: the command line


@test
def usage_errors_are_one_line_with_a_hint():
    one_line_error(run_pt(["--bogus"]), 1, "unknown option '--bogus' (see parktrace --help)", "--bogus")
    one_line_error(run_pt(["-zq"]), 1, "unknown option '-z' (see parktrace --help)", "-zq")
    one_line_error(run_pt(["-o"]), 1, "option '-o' needs a value", "-o")
    one_line_error(run_pt(["--waker=1"]), 1, "option '--waker' takes no value", "--waker=1")
    one_line_error(run_pt(["-d", "1s", "extra"]), 1, "unexpected argument 'extra'", "extra argument")
    for bad in (["-p", "1,,2"], ["-p", "1,"], ["-p", ",1"]):
        one_line_error(run_pt(bad), 1, "invalid PID list", " ".join(bad))
    one_line_error(run_pt(["--kinds", "futex,,jvm-park"]), 1, "invalid --kinds", "--kinds futex,,jvm-park")
    for bad in ("0x10ms", " 1s", "1e3ms", "inf"):
        one_line_error(run_pt(["-d", bad]), 1, f"invalid duration '{bad}'", f"-d {bad!r}")
    p = run_pt(["--help"])
    check(p.returncode == 0 and p.stdout.startswith("usage: parktrace") and p.stderr == "", "--help")


@test
def output_options_take_file_names_only():
    d = sticky_dir()
    one_line_error(run_pt(["-o", "--", "true"], cwd=d), 1, "-o wants a file name", "-o -- true")
    one_line_error(run_pt(["--collapsed", "-x"], cwd=d), 1, "--collapsed wants a file name", "--collapsed -x")
    check(os.listdir(d) == [], f"a file was made: {os.listdir(d)}")
    # The report and the stacks in one file: the stacks would replace the report.
    one_line_error(run_pt(["-o", "x", "--collapsed", "x"], cwd=d), 1, "both name", "same name")
    one_line_error(run_pt(["-o", "x", "--collapsed", f"{d}/../{os.path.basename(d)}/x"], cwd=d), 1,
                   "both name", "same file, not there yet")
    with open(os.path.join(d, "y"), "w"):
        pass
    os.link(os.path.join(d, "y"), os.path.join(d, "y2"))
    one_line_error(run_pt(["-o", "y", "--collapsed", "y2"], cwd=d), 1, "both name", "same inode")


@test
def command_that_cannot_start_exits_2():
    d = sticky_dir()
    t0 = time.monotonic()
    p = run_pt(["--", "/nonexistent"])
    one_line_error(p, 2, "cannot start /nonexistent: No such file or directory", "-- /nonexistent")
    check("report" not in p.stdout, "a report for a command that never ran")
    p = run_pt(["-o", "r.txt", "--collapsed", "c.folded", "--", "/nonexistent"], cwd=d)
    one_line_error(p, 2, "cannot start /nonexistent", "-- /nonexistent with files")
    check(os.listdir(d) == [], f"files left by a run that never traced: {os.listdir(d)}")
    check(time.monotonic() - t0 < 20, "slow")
    one_line_error(run_pt(["--", "/etc/passwd"]), 2, "cannot start /etc/passwd: Permission denied", "not executable")


if __name__ == "__main__":
    main()
