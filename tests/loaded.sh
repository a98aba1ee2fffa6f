#!/usr/bin/env bash
# make test-loaded (issue 38): the whole suite (tests/run.sh) with one core
# kept busy all along by a CPU-bound process at normal priority, as a
# shared machine is. Its last line is run.sh's. The load is stopped
# however the run ends.
set -u
cd "$(dirname "$0")/.."
# One busy process: a shell loop, with nothing to wait for.
sh -c 'while :; do :; done' &
load=$!
trap 'kill "$load" 2>/dev/null' EXIT INT TERM
echo "load: pid $load keeps one of $(nproc) CPUs busy"
tests/run.sh
