#!/usr/bin/env bash
# The demo: traces the bundled pthread workload for a few seconds, prints
# parktrace's report and renders the waiter stacks as a flame graph.
set -eu
cd "$(dirname "$0")/.."
out=build/demo
mkdir -p "$out"
echo "== parktrace -i 1s --collapsed $out/stacks.folded -- mutex_contention (3 s, 8 threads, 3 mutexes)"
build/parktrace -i 1s --collapsed "$out/stacks.folded" -- \
    build/workloads/mutex_contention -t 8 -m 3 -s 3 -r "$out/workload.json"
perl /usr/share/perl5/Devel/NYTProf/flamegraph.pl --title "parktrace: where threads wait" \
    --countname us "$out/stacks.folded" > "$out/waits.svg"
echo
echo "== the workload's own measurements: $out/workload.json"
cat "$out/workload.json"
echo "== flame graph of waiter stacks: $out/waits.svg ($(wc -c < "$out/waits.svg") bytes)"
