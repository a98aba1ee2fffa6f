#!/bin/bash
# Compares the BPF run time of two parktrace builds on one workload, both
# loaded at once: each program's kernel run time (bpf_stats) is its own,
# and both see the same events, so the VM's drift from run to run, 15-20%
# of the mean here, cancels out. The build attached first runs first at
# every hook and pays the cache misses both would (30-55 ns a run on a Java
# ping-pong), so the order alternates each round, and the difference of
# the two builds is the mean of a round pair's differences.
#
# usage: tools/bench/paired_bpf.sh ROUNDS PARKTRACE_A PARKTRACE_B -- WORKLOAD...  (ROUNDS even)
# e.g.   tools/bench/paired_bpf.sh 4 /tmp/pt_old build/parktrace -- \
#            java -Xmx128m -cp build/java PingPong -s 6
# Prints per round each build's mean BPF ns per run and the two hot
# programs' means, then the mean difference A - B over the pairs.
set -u
if [ $# -lt 5 ] || [ "$4" != "--" ]; then
    echo "usage: $0 ROUNDS PARKTRACE_A PARKTRACE_B -- WORKLOAD..." >&2
    exit 2
fi
rounds=$1 a=$2 b=$3
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

field() {   # field NAME FILE: a program's mean (NAME=runsxMEANns) or a plain NAME=N
    grep -o "$1=[0-9]*x[0-9]*ns\|$1=[0-9]*" "$2" | head -1 | sed 's/.*[x=]//; s/ns//'
}

sum=0
for i in $(seq "$rounds"); do
    if [ $((i % 2)) = 1 ]; then first=$a second=$b; else first=$b second=$a; fi
    "$first" --self-stats -o /dev/null 2> "$dir/first" & p1=$!
    sleep 2.5
    "$second" --self-stats -o /dev/null 2> "$dir/second" & p2=$!
    sleep 2.5
    "$@" > /dev/null 2>&1
    kill -TERM "$p1" "$p2"
    wait "$p1" "$p2"
    if [ "$first" = "$a" ]; then fa=$dir/first fb=$dir/second; else fa=$dir/second fb=$dir/first; fi
    ma=$(field bpf_ns_per_run "$fa") mb=$(field bpf_ns_per_run "$fb")
    if [ -z "$ma" ] || [ -z "$mb" ]; then
        echo "round $i: a tracer printed no bpf_ns_per_run" >&2
        exit 1
    fi
    echo "round $i (first: $(basename "$first")): A mean=$ma switch=$(field sched_switch "$fa")" \
         "waking=$(field sched_waking "$fa")  B mean=$mb switch=$(field sched_switch "$fb")" \
         "waking=$(field sched_waking "$fb")"
    sum=$((sum + ma - mb))
done
echo "A - B: $((sum / rounds)) ns a run (mean over $rounds rounds, the order alternating)"
