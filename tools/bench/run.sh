#!/usr/bin/env bash
# `make bench`: installs the peer tracers if missing, then runs the benchmark
# and rewrites BENCHMARKS.md. Needs root (real BPF).
set -eu
cd "$(dirname "$0")/../.."
need=""
for p in bpftrace libbpf-tools sysbench wrk libjetty9-java mariadb-server; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi
exec python3 tools/bench/bench.py "$@"
