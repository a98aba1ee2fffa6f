#!/usr/bin/env python3
"""The docs name only what exists (issue 40): every relative link of every
Markdown file resolves to a file or folder of the repository, every
repository path a Markdown file names (`tools/servers/h2.py`, `user/...`)
exists, no tracked file points into a `spec/` folder the project does not
have, and the README stays under 250 lines. Prints one PASS or FAIL line
per rule and a DONE line (tests/run.sh)."""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rule import check  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README_MAX_LINES = 250

# A path the docs name: it starts at one of the repository's top folders.
TOP = r"(?:user|bpf|tests|tools|docs|dist|proto|vmlinux|\.ci)"
PATH = re.compile(r"(?<![\w./-])(" + TOP + r"/[\w./*{},-]*[\w*}/])")
LINK = re.compile(r"\]\(([^)\s]+)\)")
SPEC = re.compile(r"(?<![\w/.-])spec/")


def tracked(*patterns):
    out = subprocess.run(["git", "ls-files", "--", *patterns], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if os.path.exists(os.path.join(ROOT, p))]


def exists(path):
    """A path, a glob, or a brace list (`user/{a,b}.c`) with at least one
    match; a word in capitals (`tools/servers/NAME.py`) stands for any."""
    path = re.sub(r"(?<![A-Za-z])[A-Z]{1,}(?![a-z])", "*", path)
    m = re.search(r"\{([^}]*)\}", path)
    if m:
        return all(exists(path[:m.start()] + alt + path[m.end():]) for alt in m.group(1).split(","))
    return bool(glob.glob(os.path.join(ROOT, path)))


def broken_links(md):
    here = os.path.dirname(md)
    bad = []
    for n, line in enumerate(open(os.path.join(ROOT, md), encoding="utf-8"), 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if not os.path.exists(os.path.normpath(os.path.join(ROOT, here, path))):
                bad.append(f"{md}:{n}: link to {target}")
    return bad


def missing_paths(md):
    bad = []
    in_output = False
    for n, line in enumerate(open(os.path.join(ROOT, md), encoding="utf-8"), 1):
        # Fenced blocks hold real output, whose paths were the machine's.
        if line.startswith("```"):
            in_output = not in_output
            continue
        if in_output:
            continue
        for path in PATH.findall(line):
            path = path.split("::", 1)[0].rstrip(".,:;")
            if path.startswith("build/") or exists(path):
                continue
            bad.append(f"{md}:{n}: names {path}")
    return bad


def spec_mentions():
    me = os.path.relpath(os.path.abspath(__file__), ROOT)
    bad = []
    for f in tracked("*.md", "*.c", "*.h", "*.py", "*.sh", "*.java", "Makefile", "*.patch"):
        if f == me:
            continue
        try:
            text = open(os.path.join(ROOT, f), encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if SPEC.search(line):
                bad.append(f"{f}:{n}: names a spec/ folder")
    return bad



def main():
    docs = tracked("*.md")
    results = [
        check("links_resolve", [b for md in docs for b in broken_links(md)]),
        check("named_paths_exist", [b for md in docs for b in missing_paths(md)]),
        check("no_spec_folder_named", spec_mentions()),
    ]
    stale = subprocess.run([sys.executable, os.path.join(ROOT, "tools/self_stats_doc.py"), "--check"]).returncode
    results.append(check("self_stats_page_is_the_registry",
                         ["docs/self-stats.md differs from user/sources/self_counters.h: run "
                          "python3 tools/self_stats_doc.py"] if stale else []))
    lines = sum(1 for _ in open(os.path.join(ROOT, "README.md"), encoding="utf-8"))
    results.append(check("readme_is_short",
                         [f"README.md: {lines} lines, over {README_MAX_LINES}"] if lines >= README_MAX_LINES else []))
    print(f"DONE check_docs: {len(results)} of {len(results)} ran")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
