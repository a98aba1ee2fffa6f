#!/usr/bin/env python3
"""Writes docs/self-stats.md from the registry of --self-stats figures
(user/sources/self_counters.h): python3 tools/self_stats_doc.py. make
check-docs fails when the page and the registry differ."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINES = {"SELF_RUN": "run", "SELF_MEMORY": "memory", "SELF_MOUNTS": "mounts", "SELF_DROPS": "drops",
         "SELF_JVMS": "JVMs", "SELF_COLLECTOR": "collector"}
STR = r'"((?:[^"\\]|\\.)*)"'
ENTRY = re.compile(r"X\((\w+),\s*" + STR + r",\s*" + STR + r",\s*(\w+),\s*(\w+),\s*" + STR + r",\s*" + STR + r"\)")


def registry():
    text = open(os.path.join(ROOT, "user/sources/self_counters.h"), encoding="utf-8").read()
    body = text[text.index("#define SELF_COUNTERS(X)"):]
    body = body[:body.index("#define SELF_ENUM")].replace("\\\n", " ")
    return [m.groups() for m in ENTRY.finditer(body)]


def page():
    out = ["# What --self-stats prints",
           "",
           "`parktrace --self-stats` prints, at exit, lines of `name=value` on stderr, each starting with",
           "`parktrace: self`, in the order below (then `parktrace: unwind tables:` with each table's size).",
           "This page is made from the registry in `user/sources/self_counters.h` by",
           "`tools/self_stats_doc.py`; `make check-docs` fails when they differ. `--listen`'s",
           "`/metrics` serves each figure as the gauge `parktrace_self_NAME` in base units (`_kb` as",
           "`_bytes`; `_ms`, `_ns`, `_s` as `_seconds`; `_pct` as `_ratio`), the programs' own runs",
           "apart, and `bpf_runs` and `bpf_ns_per_run` only with `--self-stats`.",
           "",
           "With the environment variable `PARKTRACE_TIME_PARTS=1`, a diagnostic for `tools/bench`",
           "rather than an option, every part of the two hot programs is timed at every run and a",
           "line `parktrace: self parts` follows with each part's runs and mean ns (`out_stale`,",
           "`out_idle`, `key`, `slot`, `start`, `stack`: a switch out; `in_idle`, `in_end`: a switch",
           "in; `wake`, `waker`: a waking; then, within them, `slot_new`: a blocker new to the table,",
           "`end_threads` and `end_charge`: a wait's thread counted and its time charged to its",
           "stack; `enum pt_part` in `bpf/parktrace.h`). Its two clock reads a part are inside what",
           "it measures and in the programs' run times.",
           "",
           "| name | unit | line | what it says | counted in |",
           "|---|---|---|---|---|"]
    for _id, name, unit, line, _fmt, help_, where in registry():
        shown = "each program's name" if name == "PROGRAM" else f"`{name}`"
        out.append(f"| {shown} | {unit} | {LINES[line]} | {help_.replace('|', '/')} | `{where}` |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    path = os.path.join(ROOT, "docs", "self-stats.md")
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        sys.exit(0 if current == page() else 1)
    open(path, "w", encoding="utf-8").write(page())
