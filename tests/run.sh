#!/usr/bin/env bash
# Runs the repository checks, the unit tests, the fuzz targets and the
# integration tests (real BPF, needs root). The last line is "N passed, N failed, N skipped, N known gaps"
# for CI. A known gap is a test that ended in an entry of tests/known_gaps,
# within its cap (harness.known_gap): neither a pass nor a skip.
#
# Each unit binary and integration file ends with a DONE line (check.h,
# harness.py); the integration files' says how many of their registered tests
# ran. A file that dies, or stops before all its tests ran, fails here: it
# must not just pass fewer checks.
set -u
cd "$(dirname "$0")/.."
pass=0
fail=0
skip=0
gaps=0
ran=$(mktemp)
trap 'rm -f "$ran"' EXIT

tally() {   # tally NAME RC OUTPUT [fuzz]
    local p f s done ran
    p=$(grep -c '^PASS' <<<"$3")
    f=$(grep -c '^FAIL' <<<"$3")
    s=$(grep -c '^SKIP' <<<"$3")
    g=$(grep -c '^GAP' <<<"$3")
    done=$(grep '^DONE' <<<"$3" | tail -n 1)
    # "R of N ran": the harness's count of what ran against what was registered.
    ran=$(sed -n 's/.* \([0-9]*\) of \([0-9]*\) ran.*/\1 \2/p' <<<"$done")
    if [ -z "$done" ] && [ "${4:-}" != fuzz ]; then
        echo "FAIL $1: stopped before its end (exit status $2, no DONE line)"
        f=$((f + 1))
    elif [ -n "$ran" ] && [ "${ran% *}" != "${ran#* }" ]; then
        echo "FAIL $1: only ${ran% *} of its ${ran#* } tests ran"
        f=$((f + 1))
    elif [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
        # A test that dies without reporting a failure still fails.
        echo "FAIL $1: exited with status $2"
        f=$((f + 1))
    fi
    pass=$((pass + p))
    fail=$((fail + f))
    skip=$((skip + s))
    gaps=$((gaps + g))
}

# The repository's own rules: layers, docs (make check-layers, check-docs).
for t in tests/checks/check_*.py; do
    out=$(timeout 120 python3 "$t" 2>&1)
    rc=$?
    echo "$out"
    tally "$(basename "$t")" "$rc" "$out"
    echo "check $(basename "$t" .py)" >>"$ran"
done

for t in build/tests/test_*; do
    out=$(timeout 120 "$t" 2>&1)
    rc=$?
    grep -v '^PASS' <<<"$out"
    tally "$(basename "$t")" "$rc" "$out"
    echo "unit $(basename "$t")" >>"$ran"
done

# Every fuzz target for a few seconds under ASan and UBSan: one PASS or FAIL
# line each (make fuzz runs them longer).
out=$(make -s -j"$(nproc)" fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-4}" 2>&1)
rc=$?
echo "$out"
tally fuzz "$rc" "$out" fuzz

# Every mutant (tests/mutants) still applies and builds, so none can rot;
# make mutants runs them against the tests.
out=$(tests/mutants/run.sh --build-only 2>&1)
rc=$?
grep -E '^(PASS|FAIL)' <<<"$out"
tally mutants "$rc" "$(grep -E '^(PASS|FAIL)' <<<"$out")" fuzz

echo "TIME checks, unit, fuzz, mutants $SECONDS s"
if [ "$(id -u)" != 0 ]; then
    echo "FAIL integration: needs root (real BPF)"
    fail=$((fail + 1))
else
    for t in tests/integration/test_*.py; do
        t0=$SECONDS
        out=$(timeout 1200 python3 "$t" 2>&1)
        rc=$?
        echo "$out"
        # Where the suite's 20 minutes go (issue 38, item 7).
        echo "TIME $(basename "$t") $((SECONDS - t0)) s"
        tally "$(basename "$t")" "$rc" "$out"
        sed -n "s/^\(PASS\|FAIL\|SKIP\|GAP\) \([A-Za-z0-9_]*\).*/$(basename "$t") \2/p" <<<"$out" >>"$ran"
    done
fi

# Every test that should have run did, and nothing ran unlisted
# (tests/expected_tests.sh writes the list): a deleted test, a shrunk
# variant list or a lost file is a failure, not a smaller count.
if [ "$(id -u)" = 0 ]; then
    while read -r what; do
        echo "FAIL expected test did not run: $what"
        fail=$((fail + 1))
    done < <(comm -23 <(grep -v '^#' tests/expected_tests | sort -u) <(sort -u "$ran"))
    while read -r what; do
        echo "FAIL test not in tests/expected_tests (run tests/expected_tests.sh): $what"
        fail=$((fail + 1))
    done < <(comm -13 <(grep -v '^#' tests/expected_tests | sort -u) <(sort -u "$ran"))
fi

# The ledger only shrinks: its size is capped here, lowered as gaps close.
LEDGER_CAP=9
entries=$(grep -c '^gap:' tests/known_gaps)
if [ "$entries" -gt "$LEDGER_CAP" ]; then
    echo "FAIL tests/known_gaps: $entries entries, more than its cap of $LEDGER_CAP"
    fail=$((fail + 1))
fi

echo "TIME all $SECONDS s"
echo "$pass passed, $fail failed, $skip skipped, $gaps known gaps"
[ "$fail" -eq 0 ]
