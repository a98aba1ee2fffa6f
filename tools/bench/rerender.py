"""Re-render BENCHMARKS.md from a run's results (build/bench-results.json) with the
current notes, and refresh the README's cost tables from the same results, e.g. after
editing tools/bench/notes.md:  BENCH_BASELINE=REV python3 tools/bench/rerender.py
build/bench-results.json BENCHMARKS.md README.md"""
import json, os, re, sys
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))
import bench  # noqa: E402
src, md, readme = sys.argv[1], sys.argv[2], sys.argv[3]
res = json.load(open(src))
targets = bench.write(res, md)
cols = ["parktrace", bench.BASELINE_VARIANT, "parktrace --unwind copy", "parktrace --probes uprobes", "parktrace --probes syscalls", "JFR",
        "JFR default", "bpftrace", "bpftrace uprobes", "offcputime", "hooks alone"]
cols = [c for c in cols if c and any(c == r["variant"] for ov in res["overhead"] for r in ov["rows"])]
head = {"parktrace --unwind copy": "--unwind copy", "parktrace --probes uprobes": "--probes uprobes", "parktrace --probes syscalls": "--probes syscalls",
        "bpftrace": "bpftrace script"}
L = ["| workload | " + " | ".join(head.get(c, c) for c in cols) + " |", "|---" * (len(cols) + 1) + "|"]
for ov in res["overhead"]:
    by = {r["variant"]: r for r in ov["rows"]}
    L.append(f"| `{ov['label']}` | " + " | ".join(f"{by[c]['median']:.3f}" if c in by else "-" for c in cols) + " |")
T = ["| target | measured | result |", "|---|---|---|"] + [f"| {t[0]} | {t[1]} | {t[2]} |" for t in targets]
s = open(readme).read()
s = re.sub(r"\| workload \| parktrace \|.*?\n\n", "\n".join(L) + "\n\n", s, count=1, flags=re.S)
s = re.sub(r"\| target \| measured \| result \|.*?\n\n", "\n".join(T) + "\n\n", s, count=1, flags=re.S)
open(readme, "w").write(s)
print("\n".join(L)); print("\n".join(T))
pp = [ov for ov in res["overhead"] if ov["label"] == "java PingPong"]
if pp:
    txt = ", ".join(f"{head.get(r['variant'], r['variant'])} {r['switch_ratio']:.2f}" for r in pp[0]["rows"])
    s = re.sub(r"`java PingPong`: [^\n]*\n", lambda _: f"`java PingPong`: {txt}.\n",
               open(readme).read().replace("PINGPONG_SWITCH", txt), count=1)
    open(readme, "w").write(s)
