#!/bin/sh
# sysbench's own tests as a benchmark workload: runs one and prints its
# throughput as `ops_per_sec N`, the line tools/bench/bench.py reads.
#   threads: 8 threads, each event 100 sched_yield()s around 4 mutexes
#            (sysbench threads --thread-locks=4), for SECONDS;
#   mutex:   sysbench's own mutex test with its defaults (4096 mutexes,
#            each take a random one after 10000 loop iterations), 4
#            threads, a number of takes sized to last about SECONDS
#            untraced on a 2-CPU machine.
# usage: sysbench_ops.sh threads|mutex SECONDS
set -eu
mode=${1:?usage: sysbench_ops.sh threads|mutex SECONDS}
secs=${2:-3}
case "$mode" in
threads)
    # sysbench takes whole seconds.
    whole=$(awk -v s="$secs" 'BEGIN {printf "%d", s < 1 ? 1 : s + 0.5}')
    out=$(sysbench threads --threads=8 --thread-yields=100 --thread-locks=4 --time="$whole" run)
    echo "$out" | awk '/total time:/ {t = $3 + 0} /total number of events:/ {n = $5}
                       END {if (t > 0) printf "ops_per_sec %.1f\n", n / t; else exit 1}'
    ;;
mutex)
    locks=$(awk -v s="$secs" 'BEGIN {printf "%d", s * 150000}')
    out=$(sysbench mutex --threads=4 --mutex-locks="$locks" run)
    echo "$out" | awk -v n="$((4 * locks))" '/total time:/ {t = $3 + 0}
                       END {if (t > 0) printf "ops_per_sec %.1f\n", n / t; else exit 1}'
    ;;
*)
    echo "sysbench_ops.sh: unknown test $mode (threads or mutex)" >&2
    exit 2
    ;;
esac
