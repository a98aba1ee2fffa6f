#!/usr/bin/python3
"""The live view (-i on a terminal, issue 19) in a real terminal: parktrace
runs in a tmux pane of a chosen size, keys are typed with send-keys, and the
screen is read with capture-pane. The workload is the bundled
mutex_contention: cache_lock is held longest (most thread time) and
journal_lock taken most often (most parks), so thread time and parks order
its rows differently."""
import os
import re
import shlex
import shutil
import signal
import subprocess
import time

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

# A tmux server of this file's own, so that no one else's sessions are
# touched, with its socket in TMP, which goes at exit.
SOCKET = f"pt-itest-live-{os.getpid()}"
os.environ["TMUX_TMPDIR"] = TMP
KINDS = ("futex", "jvm-park", "jvm-monitor", "jvm-wait", "go-park")
RIGHT = {"PID", "PARKS", "PEAK", "THREAD-TIME", "REAL-TIME", "AVG-PARK", "AVG-HOLD", "REAL%", "THREAD%", "RLIFE%",
         "TLIFE%", "CSP"}
ALWAYS = ("KIND", "CLASS", "ID", "THREAD-TIME", "TOP-FRAME")
UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}


def tmux(*args, check_rc=True):
    # The server exits with its last session: a command that meets it on
    # its way out is told "server exited unexpectedly" (a CI run's new
    # session), and the next starts a server of its own.
    for _ in range(3):
        p = subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, timeout=10)
        if p.returncode == 0 or "server exited unexpectedly" not in p.stderr:
            break
        time.sleep(0.2)
    if check_rc:
        check(p.returncode == 0, f"tmux {' '.join(args)}: {p.stderr.strip()}")
    return p.stdout


class Pane:
    """A detached tmux session COLS x ROWS running `sh -c SCRIPT`."""

    def __init__(self, cols, rows, script):
        if not shutil.which("tmux"):
            skip("tmux is not installed (Debian package tmux)")
        self.name = f"live{time.monotonic_ns()}"
        self.cols, self.rows = cols, rows
        tmux("new-session", "-d", "-s", self.name, "-x", str(cols), "-y", str(rows), "sh", "-c", script)

    def screen(self, history=False):
        """What the pane shows, one string per line; with HISTORY, the
        normal screen's scrolled-off lines too, wrapped lines joined."""
        args = ["-S", "-", "-J"] if history else []
        return tmux("capture-pane", "-p", *args, "-t", self.name).split("\n")

    def joined(self):
        """The visible screen with lines the terminal wrapped joined again."""
        return tmux("capture-pane", "-p", "-J", "-t", self.name).split("\n")

    def flag(self, name):
        return tmux("display-message", "-p", "-t", self.name, f"#{{{name}}}").strip()

    def keys(self, *keys):
        tmux("send-keys", "-t", self.name, *keys)

    def close(self):
        tmux("kill-session", "-t", self.name, check_rc=False)


def live_script(pt_args, seconds=8, after="", wl=None):
    """The pane's script: parktrace's live view over the workload (WL, else
    mutex_contention), then its exit status and the terminal's modes, then
    a pause to read them."""
    wl = wl or [MC, "-t", "8", "-m", "3", "-s", str(seconds), "-r",
                os.path.join(TMP, f"wl{time.monotonic_ns()}.json")]
    cmd = " ".join(shlex.quote(a) for a in pt_cmd(["-i", "300ms", *pt_args, "--", *wl]))
    # The shell survives Ctrl-C (a handler, not an ignored signal, which
    # parktrace would inherit) to report what parktrace left behind.
    return (f"trap 'echo SIGINT' INT; ulimit -c 0; echo BEFORE-PT; {cmd}; echo PT-EXIT $?; "
            "stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ' '; "
            f"echo; echo MODES-END; {after} sleep 60")


def frame(pane, want=lambda f: True, timeout=20):
    """Waits for a live-view frame with rows for which WANT holds; returns
    (lines, header, rows), rows as {title: cell}."""
    deadline, last = time.time() + timeout, []
    while time.time() < deadline:
        lines = pane.screen()
        last = lines
        titles = next((i for i, l in enumerate(lines) if l.startswith("KIND ")), None)
        if titles == 1 and is_header(lines[0]):
            rows = [cells(lines[1], l) for l in lines[2:] if l.startswith(KINDS)]
            f = (lines, lines[0], rows)
            if rows and want(f):
                return f
        time.sleep(0.1)
    raise AssertionError(f"no live view frame as wanted; the screen: {last!r}")


def is_header(line):
    # "parktrace" may leave a narrow terminal's header; the figures stay.
    return re.match(r"(parktrace  )?\d+ waits/s  \d+ blockers live  drops \d+", line) is not None


def cells(title_line, line):
    """LINE's cells by the title line's columns: a right-aligned figure ends
    where its title ends, a name starts where its title starts; a name
    followed by a figure is one word (kinds, classes and ids here are)."""
    spans = [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", title_line)]
    out, pos = {}, 0
    for i, (t, s, e) in enumerate(spans):
        if t in RIGHT:
            out[t] = line[pos:e].strip()
            pos = e
        elif i + 1 < len(spans) and spans[i + 1][0] not in RIGHT:
            out[t] = line[s:spans[i + 1][1]].strip()
            pos = spans[i + 1][1]
        else:
            words = line[s:].split()
            out[t] = words[0] if words and i + 1 < len(spans) else line[s:].strip()
            pos = s + len(out[t])
    return out


def ns(cell):
    m = re.fullmatch(r"([\d.]+)(ns|us|ms|s|m|h)", cell)
    check(m, f"not a duration: {cell!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


def sort_key(header):
    m = re.search(r"\bsort (\S+)", header)
    check(m, f"no sort key in the header {header!r}")
    return m.group(1)


def check_fits(pane, lines):
    check(is_header(lines[0]), f"the header is not the first line (the screen scrolled): {lines[:3]!r}")
    joined = [l for l in pane.joined() if l.strip()]
    wide = [l for l in joined if len(l) > pane.cols]
    check(not wide, f"{len(wide)} lines wider than {pane.cols} columns (wrapped): {wide[:2]!r}")
    shown = [l for l in lines if l.strip()]
    check(len(shown) <= pane.rows, f"{len(shown)} lines on a {pane.rows}-line pane")
    for l in lines[2:]:
        check(not l.strip() or l.startswith(KINDS), f"a line that is not a row (wrapped?): {l!r}")


def finished(pane, timeout=20):
    """Waits for the script's end: (the normal screen with its history,
    parktrace's exit status, the terminal's modes)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = pane.screen(history=True)
        if "MODES-END" in text:
            exit_line = next((l for l in text if l.startswith("PT-EXIT ")), "PT-EXIT ?")
            i = text.index("MODES-END")
            return text, exit_line.split()[1], text[i - 1].split()
        time.sleep(0.1)
    raise AssertionError(f"parktrace did not end; the screen: {pane.screen()!r}")


def check_restored(pane, how, want_exit="0", want_final=True, want_rows=None):
    text, status, modes = finished(pane)
    check(status == want_exit, f"{how}: parktrace exited {status}, want {want_exit}")
    check(pane.flag("alternate_on") == "0", f"{how}: the terminal is still on the alternate screen")
    check(pane.flag("cursor_flag") == "1", f"{how}: the cursor is still hidden")
    check(sorted(modes) == ["echo", "icanon"], f"{how}: terminal modes not restored: {modes}")
    check("BEFORE-PT" in text, f"{how}: the shell's screen was not given back: {text[:5]!r}")
    # The live frames were on the alternate screen: none is left on the shell's.
    check(not any("waits/s" in l for l in text), f"{how}: a live frame left on the normal screen")
    if want_final:
        first = next((i for i, l in enumerate(text) if l.startswith("parktrace final report")), None)
        check(first is not None, f"{how}: no final report on the terminal: {text[-12:]!r}")
        check(first > text.index("BEFORE-PT"), f"{how}: the final report came before the shell's line")
        rows = [l for l in text[first:] if l.startswith(KINDS)]
        want_rows = want_rows or (lambda rows: any("cache_lock" in l for l in rows) and
                                  any("journal_lock" in l for l in rows))
        check(want_rows(rows), f"{how}: the final report lacks the workload's locks: {rows!r}")


@test
def fits_80_columns_and_the_height():
    # 7 lines: the header, the titles and 5 of the workload's 6 rows.
    pane = Pane(80, 7, live_script([]))
    try:
        lines, header, rows = frame(pane, lambda f: len(f[2]) >= 5)
        check_fits(pane, lines)
        titles = lines[1].split()
        check(all(t in titles for t in ALWAYS), f"at 80 columns the titles are {titles}")
        check(len(rows) == 5, f"{len(rows)} rows on a 7-line pane, want 5")
        for r in rows:
            check(r["THREAD-TIME"] and r["ID"] and r["TOP-FRAME"], f"a row with an empty cell: {r}")
        pane.keys("q")
        check_restored(pane, "q at 80 columns")
    finally:
        pane.close()


@test
def fits_200_columns_with_every_column():
    pane = Pane(200, 24, live_script([]))
    try:
        lines, header, rows = frame(pane, lambda f: any(r.get("ID") == "cache_lock" for r in f[2]))
        check_fits(pane, lines)
        titles = lines[1].split()
        check("CAUSED-BY" in titles and "RLIFE%" in titles and "COMM" in titles,
              f"at 200 columns the titles are {titles}")
        cache = next(r for r in rows if r["ID"] == "cache_lock")
        check(cache["CAUSED-BY"] == "worker", f"cache_lock caused by {cache['CAUSED-BY']!r}, want worker")
        # A resize is followed: at 90 columns CAUSED-BY leaves first.
        tmux("resize-window", "-t", pane.name, "-x", "90", "-y", "24")
        pane.cols = 90
        lines, _, _ = frame(pane, lambda f: "CAUSED-BY" not in f[0][1])
        check_fits(pane, lines)
        check(all(t in lines[1].split() for t in ALWAYS), f"at 90 columns the titles are {lines[1]!r}")
        pane.keys("C-c")
        check_restored(pane, "Ctrl-C")
    finally:
        pane.close()


@test
def go_park_rows_in_the_live_view():
    """Goroutine waits live (issue 44, item 5): go_mutex's mutex is a
    go-park row named main.mu, class Mutex (sync's simple name), at
    main.worker, the unlocker's main.worker its cause."""
    go_mutex = os.path.join(BUILD, "go", "go_mutex")
    pane = Pane(200, 24, live_script([], wl=[go_mutex, "-s", "6"]))
    try:
        lines, _, rows = frame(pane, lambda f: any(r.get("KIND") == "go-park" and r.get("ID") == "main.mu" and
                                                   r.get("CAUSED-BY") for r in f[2]))
        check_fits(pane, lines)
        mu = next(r for r in rows if r["KIND"] == "go-park" and r["ID"] == "main.mu")
        check(mu["CLASS"] == "Mutex" and mu["TOP-FRAME"] == "main.worker" and mu["CAUSED-BY"] == "main.worker",
              f"the mutex's live row: {mu}")
        pane.keys("q")
        check_restored(pane, "q over a Go program",
                       want_rows=lambda rows: any(l.startswith("go-park") and "main.mu" in l for l in rows))
    finally:
        pane.close()


def in_order(rows, key):
    vals = [key(r) for r in rows]
    return all(a >= b for a, b in zip(vals, vals[1:]))


@test
def c_shows_the_wait_chains():
    """c shows the wait chains in place of the rows, as the text report
    writes them; c again, the rows. mutex_contention's threads wait on
    mutexes whose holders run (or wait in turn)."""
    pane = Pane(160, 20, live_script([], seconds=10))
    try:
        frame(pane, lambda f: any(r["ID"] == "cache_lock" for r in f[2]))
        pane.keys("c")
        deadline, lines = time.time() + 10, []
        while time.time() < deadline:
            lines = pane.screen()
            chains = [l for l in lines if re.search(r" -\[(cache_lock|journal_lock|stats_lock|[a-z_]+)\]-> .* \((running|runnable|sleeping|io|cycle|unknown)(: [^)]*)?\)$", l.rstrip())]
            if any("wait chains:" in l for l in lines) and chains:
                break
            time.sleep(0.2)
        else:
            check(False, f"no wait chains after c: {lines}")
        check(not any(l.startswith("KIND ") for l in lines), f"the rows' titles with the chains: {lines}")
        pane.keys("c")
        frame(pane, lambda f: any(r["ID"] == "cache_lock" for r in f[2]))
        pane.keys("q")
        check_restored(pane, "q after the chains")
    finally:
        pane.close()


@test
def s_changes_the_sort():
    pane = Pane(120, 20, live_script([], seconds=10))
    try:
        locks = lambda f: {"cache_lock", "journal_lock"} <= {r["ID"] for r in f[2]}
        _, header, _ = frame(pane, locks)
        # cli.md: rows by thread time, the live view too (issue 37: a CSP
        # first hid a database's row locks, wait-role rows with no CSP).
        check(sort_key(header) == "time", f"-i sorts by thread time first: {header!r}")
        check(in_order(rows0 := frame(pane, locks)[2], lambda r: ns(r["THREAD-TIME"])),
              f"sort time: rows out of order: {[(r['ID'], r['THREAD-TIME']) for r in rows0]}")
        seen = {"time": [r["ID"] for r in rows0].index("cache_lock") < [r["ID"] for r in rows0].index("journal_lock")}
        # time -> csp -> parks -> peak -> time
        pane.keys("s")
        frame(pane, lambda f: sort_key(f[1]) == "csp")
        for key, col, figure in (("parks", "PARKS", lambda r: int(r["PARKS"])),
                                 ("peak", "PEAK", lambda r: int(r["PEAK"]))):
            pane.keys("s")
            _, header, rows = frame(pane, lambda f: locks(f) and sort_key(f[1]) == key)
            # The rows of one frame in this key's order, by the figures shown.
            check(in_order(rows, figure), f"sort {key}: rows out of order: {[(r['ID'], r[col]) for r in rows]}")
            ids = [r["ID"] for r in rows]
            seen[key] = ids.index("cache_lock") < ids.index("journal_lock")
        # The workload: cache_lock most thread time, journal_lock most parks.
        check(seen["time"] and not seen["parks"], f"cache_lock before journal_lock: {seen}")
        pane.keys("s")
        frame(pane, lambda f: sort_key(f[1]) == "time")
        pane.keys("q")
        check_restored(pane, "q after sorting")
    finally:
        pane.close()


def pane_pt_pid(pane):
    """parktrace's pid: the pane's shell's child running PT."""
    shell = int(pane.flag("pane_pid"))
    for _ in range(100):
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                if ppid == shell and os.readlink(f"/proc/{pid}/exe") == os.path.realpath(PT):
                    return int(pid)
            except (OSError, ValueError, IndexError):
                continue
        time.sleep(0.1)
    raise AssertionError("parktrace's process not found")


def restored_after(how, pt_args=(), seconds=8, act=None, want_exit="0", want_final=True):
    pane = Pane(100, 24, live_script(list(pt_args), seconds=seconds))
    try:
        frame(pane)
        if act:
            act(pane)
        check_restored(pane, how, want_exit, want_final)
    finally:
        pane.close()


@test
def restored_after_sigterm():
    restored_after("SIGTERM", act=lambda p: os.kill(pane_pt_pid(p), signal.SIGTERM))


@test
def restored_after_the_duration():
    restored_after("-d", pt_args=("-d", "2s"))


@test
def restored_after_the_command_exits():
    restored_after("the command's exit", seconds=2)


@test
def restored_after_a_crash():
    # An error that kills (abort): the terminal is given back all the same;
    # no final report, and the shell sees SIGABRT (128 + 6).
    restored_after("SIGABRT", act=lambda p: os.kill(pane_pt_pid(p), signal.SIGABRT), want_exit="134",
                   want_final=False)


@test
def ctrl_z_gives_the_terminal_back_until_continued():
    pane = Pane(100, 24, live_script([], seconds=10))
    try:
        frame(pane)
        check(pane.flag("alternate_on") == "1", "the live view is not on the alternate screen")
        pane.keys("C-z")
        wait_for(lambda: pane.flag("alternate_on") == "0", "the normal screen after Ctrl-Z", timeout=5)
        check(pane.flag("cursor_flag") == "1", "Ctrl-Z left the cursor hidden")
        # The pane's shell has no job control: continue its whole group, as fg would.
        os.killpg(int(pane.flag("pane_pid")), signal.SIGCONT)
        wait_for(lambda: pane.flag("alternate_on") == "1", "the live view back after SIGCONT", timeout=5)
        frame(pane)
        pane.keys("q")
        check_restored(pane, "q after Ctrl-Z")
    finally:
        pane.close()


@test
def keys_are_not_read_when_stdin_is_not_the_terminal():
    # stdin from /dev/null: the view is drawn, but "q" reaches nothing; it
    # ends with the command (5 s) and prints the final report.
    pane = Pane(100, 24, live_script([], seconds=5).replace("; echo PT-EXIT", " </dev/null; echo PT-EXIT", 1))
    try:
        _, header, _ = frame(pane)
        check("h help" not in header, f"the header offers keys it cannot read: {header!r}")
        sent = time.monotonic()
        pane.keys("q")
        check_restored(pane, "no keys")
        # It ended with the command, not at the q (read, it ends the view
        # within an interval, 0.3 s).
        ran = time.monotonic() - sent
        check(ran >= 0.6, f"the view ended {ran:.1f} s after a q it cannot read: the q reached it")
    finally:
        pane.close()


import atexit  # noqa: E402

H2_JAR = "/usr/share/java/h2.jar"
DB_LOAD = os.path.join(ROOT, "tools", "servers", "java", "EmbeddedDbLoad.java")


@test
def an_embedded_database_shows_its_row_locks_first():
    # Issue 37: H2's row locks are Object.wait on one object per
    # transaction, wait-role rows with no CSP. Sorted by CSP, the live view
    # filled with one-park monitor rows and never showed them, and 100
    # columns cut their top frame to "~re.endTransaction". By thread time
    # the row locks come first, folded ("N objects"), and the top frame
    # keeps its Class.method.
    if not os.path.exists(H2_JAR):
        skip("no H2 (Debian package libh2-java)")
    classes = os.path.join(TMP, "dbload")
    c = subprocess.run(["javac", "-d", classes, "-cp", H2_JAR, DB_LOAD], capture_output=True, text=True, timeout=120)
    check(c.returncode == 0, f"javac: {c.stderr[-300:]}")
    url = f"jdbc:h2:{os.path.join(TMP, 'h2db', 'db')};LOCK_TIMEOUT=10000"
    db = subprocess.Popen(["java", "-Xmx256m", "-cp", f"{H2_JAR}:{classes}", "EmbeddedDbLoad", url, "8", "30", "16"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    pane = None
    try:
        check(db.stdout.readline().startswith("started"), "the database load did not start")
        cmd = " ".join(shlex.quote(a) for a in pt_cmd(["-i", "1s", "-p", str(db.pid)]))
        pane = Pane(100, 30, f"{cmd}; sleep 60")
        lines, header, rows = frame(pane, lambda f: sort_key(f[1]) == "time" and "objects" in f[0][2], timeout=40)
        first = rows[0]
        check(first["KIND"] == "jvm-wait" and first["CLASS"] == "Transaction",
              f"row 1 is {first['KIND']} {first['CLASS']}, not the row locks:\n" + "\n".join(lines))
        # Transaction.waitForThisToEnd, or once C2 inlined it, the
        # TransactionMap method it was compiled into (docs/limits.md).
        top = first["TOP-FRAME"]
        check(re.search(r"\bTransaction(Map)?\.\w+$", top) is not None,
              f"row 1's top frame {top!r} lost its Class.method:\n" + "\n".join(lines))
        pane.keys("q")
    finally:
        if pane:
            pane.close()
        db.kill()
        db.wait()


atexit.register(lambda: subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True))

if __name__ == "__main__":
    main()
