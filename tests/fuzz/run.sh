#!/usr/bin/env bash
# Runs each fuzz target for a bounded time (make fuzz calls it):
#   run.sh BUILD_DIR SECONDS TIMEOUT RSS_MB TARGET...
# Prints one line per target, "PASS fuzz_T: ..." or "FAIL fuzz_T: ...", for
# tests/run.sh's tally; exits 1 if any failed. libFuzzer's own output goes to
# BUILD_DIR/logs/T.log, an input that crashed, leaked or timed out to
# BUILD_DIR/crashes/T-*. Each target first runs the inputs that once broke
# it (tests/fuzz/crashes/T-*), then fuzzes from its committed seeds
# (tests/fuzz/corpus/T), seeds made here, and what earlier runs found.
set -u
cd "$(dirname "$0")/../.."
build=$1 secs=$2 timeout=$3 rss=$4
shift 4

# Seeds that are binary or come from this machine.
seed() {   # seed TARGET DIR
    case $1 in
    elf*)
        cp "$build"/seed_elf* "$2"/ 2>/dev/null
        for f in build/workloads/*; do [ -f "$f" ] && cp "$f" "$2/workload-$(basename "$f")"; done ;;
    procmaps)
        cat /proc/self/maps >"$2/self-maps" ;;
    vmstructs)
        python3 tests/fuzz/vmstructs_seed.py >"$2/jvm-image" ;;
    pclntab)
        python3 tests/fuzz/pclntab_seed.py >"$2/three-functions" ;;
    esac
}

mkdir -p "$build/crashes" "$build/logs"
# The targets' input files (fuzz_util.h), left behind by a target that dies.
export TMPDIR=$build/tmp
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
# One target: its PASS or FAIL lines into BUILD_DIR/logs/T.result.
fuzz_one() {   # fuzz_one TARGET
    local t=$1 corpus log seeds opts known rc when runs cov artifact
    corpus=$build/corpus/$t log=$build/logs/$t.log
    mkdir -p "$corpus"
    seed "$t" "$corpus"
    seeds=()
    [ -d "tests/fuzz/corpus/$t" ] && seeds=("tests/fuzz/corpus/$t")
    opts=(-timeout="$timeout" -rss_limit_mb="$rss" -artifact_prefix="$build/crashes/$t-")
    known=(tests/fuzz/crashes/"$t"-*)
    rc=0 when="on a recorded input"
    if [ -e "${known[0]}" ]; then
        UBSAN_OPTIONS=print_stacktrace=1 "$build/fuzz_$t" "${opts[@]}" "${known[@]}" >"$log" 2>&1
        rc=$?
    fi
    if [ "$rc" -eq 0 ]; then
        when="while fuzzing"
        UBSAN_OPTIONS=print_stacktrace=1 "$build/fuzz_$t" "${opts[@]}" -max_total_time="$secs" \
            -print_final_stats=1 "$corpus" "${seeds[@]}" >"$log" 2>&1
        rc=$?
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    if [ "$rc" -eq 0 ]; then
        echo "PASS fuzz_$t: ${runs:-0} inputs in ${secs}s, ${cov:-no coverage line}"
    else
        artifact=$(sed -n -e 's/.*Test unit written to //p' -e 's/^Running: //p' "$log" | tail -n 1)
        echo "FAIL fuzz_$t: exit $rc $when${runs:+ (input $runs)}; reproduce: $build/fuzz_$t ${artifact:-(no input saved)}"
        # What went wrong and where, down to the target's own frame.
        awk '/==ERROR|runtime error|^SUMMARY/ { print } /^    #[0-9]/ && !done { print } \
             /LLVMFuzzerTestOneInput/ { done = 1 }' "$log" | head -n 20
    fi >"$build/logs/$t.result"
}

# As many targets at once as there are CPUs: each is one busy process, so
# make test's fuzzing takes SECONDS x targets / CPUs (issue 38: the suite
# stays under 20 minutes).
for t in "$@"; do
    rm -f "$build/logs/$t.result"
done
for t in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do
        wait -n
    done
    fuzz_one "$t" &
done
wait
fail=0
for t in "$@"; do
    if [ -s "$build/logs/$t.result" ]; then
        cat "$build/logs/$t.result"
        grep -q '^FAIL' "$build/logs/$t.result" && fail=1
    else
        echo "FAIL fuzz_$t: ended with no result"
        fail=1
    fi
done
exit "$fail"
