#!/usr/bin/env bash
# Writes tests/expected_tests: every unit test file and every registered
# integration test, one per line ("unit NAME" or "FILE TEST"). tests/run.sh
# fails when one of them did not run, or when a test ran that is not listed:
# run this after adding or removing a test, and commit the list.
set -eu
cd "$(dirname "$0")/.."
{
    echo "# Every test run.sh must see run (tests/expected_tests.sh writes it)."
    for f in tests/checks/check_*.py; do
        echo "check $(basename "$f" .py)"
    done
    for f in tests/unit/test_*.c; do
        echo "unit $(basename "$f" .c)"
    done
    for f in tests/integration/test_*.py; do
        for t in $(python3 "$f" --list); do
            echo "$(basename "$f") $t"
        done
    done
} > tests/expected_tests
