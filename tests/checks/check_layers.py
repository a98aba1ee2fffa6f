#!/usr/bin/env python3
"""The layers of user/ hold (issue 40; docs/design.md, "Layers"). The order
is the Makefile's USER_DIRS, top first: a file includes only headers of its
own folder and of the folders after it. The kernel boundary is
user/kernel/: no other file calls the BPF API, reads the skeleton or holds a
map's descriptor. State lives in structs, not in function-local statics. No
C file (nor BPF header) is over 600 lines and no function over 80, except those
docs/design.md names with why ("Long files and functions"). Prints one PASS or FAIL line per rule and a
DONE line (tests/run.sh)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rule import check  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNEL = "user/kernel"
# Headers every layer may include: the types shared with the BPF side, and
# the protobuf code generated at build time.
SHARED = {"parktrace.h": "bpf", "profile.pb-c.h": "build/proto"}
# The BPF API: libbpf's calls and headers, and the skeleton.
BPF_API = re.compile(r"\b(bpf_map_\w+|bpf_obj_\w+|bpf_prog_\w+|bpf_program__\w+|bpf_object__\w+|"
                     r"bpf_map__\w+|bpf_link__\w+|ring_buffer__\w+|parktrace_bpf__\w+)\s*\(|"
                     r"#include\s*[<\"](bpf/|parktrace\.skel\.h)")
# The kernel's map descriptors and skeleton, fields of user/kernel/'s structs:
# held and read there alone.
MAP_FDS = re.compile(r"(?:->|\.)(skel|slots_fd|procs_fd|uncounted_fd|unwatched_life_fd|unwatched_fd|ustacks_fd|"
                     r"unwind_bins_fd|unwind_procs_fd|bins_fd|stack_time_fd|waker_time_fd|stacks_fd|samples_fd|"
                     r"traced_fd|jvm_layouts_fd|java_threads_fd|execs_fd|times_fd|chain_time_fd|chain_comms_fd|chain_kstacks_fd)\b")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# A static variable declared inside a function: indented, not a constant.
LOCAL_STATIC = re.compile(r"^[ \t]+static\s+(?!const\b|inline\b)[^(]*?[;=\[]", re.M)


def layer_order():
    text = open(os.path.join(ROOT, "Makefile")).read()
    m = re.search(r"^USER_DIRS\s*:=\s*((?:.*\\\n)*.*)$", text, re.M)
    return m.group(1).replace("\\\n", " ").split()


def sources(dirs):
    out = []
    for d in dirs:
        for name in sorted(os.listdir(os.path.join(ROOT, d))):
            if name.endswith((".c", ".h")):
                out.append(f"{d}/{name}")
    return out


def code_only(text):
    """TEXT with comments and string literals blanked, lines kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80


def allowed_long():
    """The files and functions docs/design.md lets run long, each with why:
    lines "- `user/x.c`: why" and "- `name()` (`user/x.c`): why" under its
    "Long files and functions" heading."""
    text = open(os.path.join(ROOT, "docs/design.md"), encoding="utf-8").read()
    m = re.search(r"^## Long files and functions\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    files, funcs = set(), set()
    for line in (m.group(1) if m else "").splitlines():
        f = re.match(r"- `(user/[\w/]+\.c)`: \S", line)
        g = re.match(r"- `(\w+)\(\)` \(`(user/[\w/]+\.c)`\): \S", line)
        if f:
            files.add(f.group(1))
        if g:
            funcs.add((g.group(2), g.group(1)))
    return files, funcs


def long_functions(path, text):
    """(name, lines) of each function of TEXT over MAX_FUNCTION_LINES: from
    its signature's first line to its closing brace at column 0."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if line != "{" or i == 0:
            continue
        k = i - 1
        while k > 0 and lines[k - 1].strip() and not lines[k - 1].startswith(("}", "/*", " *", "#")) and \
                not lines[k - 1].rstrip().endswith((";", "*/")):
            k -= 1
        m = re.search(r"(\w+)\s*\(", lines[k])
        end = next((j for j in range(i + 1, len(lines)) if lines[j] == "}"), len(lines) - 1)
        if m and end - k + 1 > MAX_FUNCTION_LINES:
            out.append((m.group(1), end - k + 1))
    return out



def main():
    dirs = layer_order()
    rank = {d: i for i, d in enumerate(dirs)}
    files = sources(dirs)
    strays = []
    for top, subdirs, names in os.walk(os.path.join(ROOT, "user")):
        rel = os.path.relpath(top, ROOT)
        if rel not in rank and any(n.endswith((".c", ".h")) for n in names):
            strays.append(f"{rel}: a folder of code in no layer (Makefile USER_DIRS)")
    home, twins = {}, []
    for f in files:
        name = os.path.basename(f)
        if name.endswith(".h"):
            if name in home or name in SHARED:
                twins.append(f"{f}: the name of {home.get(name, SHARED.get(name))}/{name} too")
            home.setdefault(name, os.path.dirname(f))
    upward, unknown, kernel_calls, statics = [], [], [], []
    for f in files:
        d = os.path.dirname(f)
        text = open(os.path.join(ROOT, f), encoding="utf-8").read()
        for n, inc in ((text.count("\n", 0, m.start()) + 1, m.group(1)) for m in INCLUDE.finditer(text)):
            name = os.path.basename(inc)
            if name in SHARED or (name == "parktrace.skel.h" and d == KERNEL):
                continue
            if name not in home:
                unknown.append(f"{f}:{n}: includes {inc}, no header of user/")
            elif rank[home[name]] < rank[d]:
                upward.append(f"{f}:{n}: {d} includes {home[name]}/{name}, a layer above it")
        code = code_only(text)
        if d != KERNEL:
            for m in BPF_API.finditer(code):
                kernel_calls.append(f"{f}:{code.count(chr(10), 0, m.start()) + 1}: {m.group(0).strip()}")
            for m in MAP_FDS.finditer(code):
                kernel_calls.append(f"{f}:{code.count(chr(10), 0, m.start()) + 1}: reads {m.group(1)}")
        for m in LOCAL_STATIC.finditer(code):
            statics.append(f"{f}:{code.count(chr(10), 0, m.start()) + 1}: {m.group(0).strip()}")
    long_files_ok, long_funcs_ok = allowed_long()
    long_files, long_funcs = [], []
    # The BPF programs too, whose code lives in headers included once.
    bpf = sorted(os.path.join("bpf", n) for n in os.listdir(os.path.join(ROOT, "bpf")) if n.endswith((".c", ".h")))
    for f in files + bpf:
        if not f.endswith(".c") and not f.startswith("bpf"):
            continue
        text = open(os.path.join(ROOT, f), encoding="utf-8").read()
        n = text.count("\n")
        if n > MAX_FILE_LINES and f not in long_files_ok:
            long_files.append(f"{f}: {n} lines (docs/design.md, \"Long files and functions\", says why not?)")
        for name, n in long_functions(f, text):
            if (f, name) not in long_funcs_ok:
                long_funcs.append(f"{f}: {name}() {n} lines")
    results = [
        check("every_folder_is_a_layer", strays),
        check("header_names_are_unique", twins),
        check("includes_resolve", unknown),
        check("no_include_goes_up", upward),
        check("only_user_kernel_touches_bpf", kernel_calls),
        check("no_function_local_state", statics),
        check("files_are_short", long_files),
        check("functions_are_short", long_funcs),
    ]
    print(f"DONE check_layers: {len(results)} of {len(results)} ran")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
