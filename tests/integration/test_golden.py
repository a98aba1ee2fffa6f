#!/usr/bin/env python3
"""The golden files (tests/golden/, which tests/unit/test_model.c holds the
writers to byte for byte) were written by the writers they check, so a
wrong figure written once stays golden. Here each writer's golden output is
read back and held to the others' and to the spec's definitions: the text
and live views show the JSON rows' figures, formatted as docs/contract/cli.md says;
the collapsed files' counts and times are the JSON rows' waits and thread
times. (The model itself is made by hand, its figures given rather than
derived: how they are derived is tested against real workloads.) No BPF:
the files alone."""
import json
import os
import re

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

GOLDEN = os.path.join(ROOT, "tests", "golden")
UNITS = {"ns": 1, "us": 1e3, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}


def read(name):
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as f:
        return f.read()


def duration_ns(cell):
    """A duration as the text views print it (4.42s, 65.5ms, 999ns, 34.3h);
    None for '-'."""
    if cell == "-":
        return None
    m = re.fullmatch(r"([0-9.]+)(ns|us|\u00b5s|ms|s|m|h)", cell)
    check(m, f"not a duration: {cell!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


def near(printed, exact, what):
    """PRINTED (3 significant digits at most) shows EXACT."""
    check(exact is not None and abs(printed - exact) <= 0.005 * exact + 0.5,
          f"{what}: printed {printed:g}, the JSON says {exact}")


FIGURES = ("PID", "PARKS", "PEAK", "THREAD-TIME", "REAL-TIME", "AVG-PARK", "AVG-HOLD", "REAL%", "THREAD%", "CSP",
           "RLIFE%", "TLIFE%")


def columns(title_line, line):
    """LINE's kind and figures by the titles' places: a figure (one word,
    right-aligned) ends where its title ends; the kind is the first word."""
    out = {"KIND": line.split()[0]}
    for m in re.finditer(r"\S+", title_line):
        if m.group() in FIGURES:
            words = line[:m.end()].split()
            check(words and line[m.end() - 1] != " ", f"no {m.group()} figure in {line!r}")
            out[m.group()] = words[-1]
    return out


def text_cells(title_line, line):
    """A text report's row: the kind and PID first, then, after the role,
    the figures in the titles' order. A figure wider than its column (123
    million parks) pushes the rest right, so they are read as words."""
    titles = title_line.split()
    figs = titles[titles.index("ROLE") + 1:titles.index("TOP-FRAME")]
    words = line.split()
    at = max(i for i, w in enumerate(words) if w in ("lock", "wait") and i + len(figs) < len(words))
    out = {"KIND": words[0], "PID": words[1]}
    out.update(zip(figs, words[at + 1:at + 1 + len(figs)]))
    return out


def count(cell):
    """A count as printed: whole, or to three figures with k, M, G, ..."""
    m = re.fullmatch(r"([0-9.]+)([kMGTPE]?)", cell)
    check(m, f"not a count: {cell!r}")
    return float(m.group(1)) * 1000 ** ("kMGTPE".index(m.group(2)) + 1 if m.group(2) else 0)


def check_row(cells, b, what):
    """A text or live row's cells against JSON row B."""
    check(cells["KIND"] == b["kind"], f"{what}: kind {cells['KIND']!r}, JSON {b['kind']!r}")
    if "PID" in cells:
        check(int(cells["PID"]) == b["pid"], f"{what}: pid {cells['PID']}, JSON {b['pid']}")
    for title, key in (("PARKS", "parks"), ("PEAK", "peak_parked")):
        if title in cells:
            n = count(cells[title])
            exact = cells[title].isdigit()
            check(n == b[key] if exact else abs(n - b[key]) <= 0.005 * b[key],
                  f"{what}: {title} {cells[title]}, JSON {key} {b[key]}")
    for title, key in (("THREAD-TIME", "thread_time_ns"), ("REAL-TIME", "real_time_ns"),
                       ("AVG-PARK", "avg_park_ns"), ("AVG-HOLD", "avg_hold_ns")):
        if title in cells:
            ns = duration_ns(cells[title])
            # A dash: nothing to average (a zero hold, a wait of under a microsecond).
            if ns is not None:
                near(ns, b[key], f"{what}: {title}")
    for title, key in (("REAL%", "real_util"), ("THREAD%", "thread_util")):
        if title in cells:
            # JSON keeps six significant figures.
            check(abs(float(cells[title]) - 100 * b[key]) <= max(0.051, 1e-5 * 100 * b[key]),
                  f"{what}: {title} {cells[title]}, JSON {b[key]}")
    if "CSP" in cells:
        csp = cells["CSP"].lstrip("*")
        if b["csp"] is None:
            check(csp == "-", f"{what}: CSP {cells['CSP']}, JSON null")
        else:
            check(abs(float(csp) - b["csp"]) <= 0.0051, f"{what}: CSP {cells['CSP']}, JSON {b['csp']}")


@test
def text_report_shows_the_json_figures():
    reports = [json.loads(l) for l in read("json.jsonl").splitlines()]
    blocks = re.split(r"(?m)^(?=parktrace \w+ report:)", read("text.txt"))
    blocks = [b for b in blocks if b.startswith("parktrace ")]
    check(len(blocks) == len(reports), f"{len(blocks)} text reports, {len(reports)} JSON ones")
    for text, r in zip(blocks, reports):
        lines = text.splitlines()
        head = lines[0]
        check(head.startswith(f"parktrace {r['type']} report:"), f"text {head!r} for a {r['type']} report")
        t = r["totals"]
        for word, value in (("blockers", t["blockers"]), ("waits", t["waits"])):
            check(f" {value} {word}" in head, f"{head!r}: not {value} {word}")
        check(f"window {r['window_ns'] / 1e9:.2f}s" in head, f"{head!r}: window {r['window_ns']}")
        # The chain lines, indented, after their own heading (write_chains.c).
        rows = [l for l in lines[2:] if l and not l.startswith(("phase:", "  ", "-- wait chains"))]
        check(len(rows) == len(r["blockers"]), f"{r['type']}: {len(rows)} text rows, {len(r['blockers'])} JSON")
        for i, (line, b) in enumerate(zip(rows, r["blockers"])):
            check_row(text_cells(lines[1], line), b, f"{r['type']} row {i + 1}")
        at = [i for i, l in enumerate(lines) if l.startswith("-- wait chains")]
        chains = []
        for l in lines[at[0] + 1:] if at else []:
            if not l.startswith("  "):
                break
            chains.append(l)
        check(len(chains) == len(r["chains"]), f"{r['type']}: {len(chains)} text chains, {len(r['chains'])} JSON")
        for line, ch in zip(chains, r["chains"]):
            near(duration_ns(line.split()[0]), ch["time_ns"], f"{r['type']} chain {line!r}")
            check(line.split()[1] == str(ch["waits"]) and line.rstrip().endswith(f"({ch['end']})"),
                  f"{line!r} against {ch}")
        phases = [l for l in lines if l.startswith("phase:")]
        check(len(phases) == len(r["phases"]), f"{r['type']}: {len(phases)} text phases, {len(r['phases'])} JSON")
        for line, ph in zip(phases, r["phases"]):
            check(f"peak CSP {ph['peak_csp']:.2f}, mean {ph['mean_csp']:.2f}" in line, f"{line!r} against {ph}")
            check(("to now" in line) == (ph["end"] is None), f"{line!r}: open or closed, against {ph}")


@test
def live_frames_show_the_json_figures():
    # Frames of the first (interval) report's rows, each begun by home and
    # clear: rows of any order, each a JSON row's figures.
    r = json.loads(read("json.jsonl").splitlines()[0])
    frames = [f for f in read("live.txt").split("\x1b[H\x1b[J") if f]
    shown = 0
    for n, f in enumerate(frames):
        lines = f.splitlines()
        if len(lines) < 2 or not lines[1].startswith("KIND "):
            continue
        for i, line in enumerate(lines[2:]):
            if not re.match(r"(futex|jvm-)", line):
                continue
            cells = columns(lines[1], line)
            match = [b for b in r["blockers"] if b["kind"] == cells["KIND"] and
                     abs(count(cells["PARKS"]) - b["parks"]) <= 0.005 * b["parks"]]
            check(match, f"frame {n + 1} row {i + 1} ({line.strip()[:60]!r}) is no JSON row")
            check_row(cells, match[0], f"frame {n + 1} row {i + 1}")
            shown += 1
    check(shown >= 10, f"only {shown} live rows read")


def collapsed(name):
    """(leaf class, value) per line of a collapsed file."""
    out = []
    for line in read(name).splitlines():
        frames, value = line.rsplit(" ", 1)
        out.append((frames.split(";")[-1], int(value)))
    return out


@test
def collapsed_stacks_are_the_json_waits():
    # The model's stacks are its rows' first stacks: each (count, time) line
    # is its row's waits and thread time (microseconds in the time files).
    r = json.loads(read("json.jsonl").splitlines()[1])
    check(r["type"] == "final", f"the second golden report is a {r['type']}")
    by_leaf = {}
    for b in r["blockers"]:
        if b["first_stack"]:
            by_leaf.setdefault(f"[{b['class']}]", b)
    counts, times = dict(collapsed("collapsed_count.folded")), dict(collapsed("collapsed_time.folded"))
    checked = 0
    for leaf, b in by_leaf.items():
        if leaf in counts and leaf in times:
            check(counts[leaf] == b["parks"], f"{leaf}: collapsed count {counts[leaf]}, JSON parks {b['parks']}")
            check(times[leaf] == b["thread_time_ns"] // 1000,
                  f"{leaf}: collapsed time {times[leaf]} us, JSON {b['thread_time_ns']} ns")
            checked += 1
    check(checked >= 3, f"only {checked} collapsed lines matched a JSON row")


if __name__ == "__main__":
    main()
