#!/usr/bin/env bash
# Runs the unit tests and the integration tests (real BPF, needs root).
# The last line is "N passed, N failed" for CI.
set -u
cd "$(dirname "$0")/.."
pass=0
fail=0

tally() {   # tally NAME RC OUTPUT
    local p f
    p=$(grep -c '^PASS' <<<"$3")
    f=$(grep -c '^FAIL' <<<"$3")
    # A test that dies without reporting a failure still fails.
    if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $1: exited with status $2"
        f=1
    fi
    pass=$((pass + p))
    fail=$((fail + f))
}

for t in build/tests/test_*; do
    out=$(timeout 120 "$t" 2>&1)
    rc=$?
    grep -v '^PASS' <<<"$out"
    echo "$(basename "$t"): $(grep -c '^PASS' <<<"$out") checks passed"
    tally "$(basename "$t")" "$rc" "$out"
done

# Every fuzz target for a few seconds under ASan and UBSan: one PASS or FAIL
# line each (make fuzz runs them longer).
out=$(make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-7}" 2>&1)
rc=$?
echo "$out"
tally fuzz "$rc" "$out"

if [ "$(id -u)" != 0 ]; then
    echo "FAIL integration: needs root (real BPF)"
    fail=$((fail + 1))
else
    for t in tests/integration/test_*.py; do
        out=$(timeout 1200 python3 "$t" 2>&1)
        rc=$?
        echo "$out"
        tally "$(basename "$t")" "$rc" "$out"
    done
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
