#!/usr/bin/env python3
"""The harness's own rules (tests/README.md, "Known gaps"): a known gap ends a
test as a gap only when the ledger lists it for that test and its amount is
within the cap; otherwise the test fails. And the ledger as committed parses,
each entry whole."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import *  # noqa: F401,F403,E402

LEDGER_TEXT = """# a comment
gap: sample_gap
test: test_harness.py known_gap_follows_the_ledger
  test_futex.py some_test
covers: a condition
  over two lines
cap: 3 waits
closes: never
"""


def outcome(name, amount):
    try:
        known_gap(name, "reason", amount)
    except harness.KnownGap:
        return "gap"
    except AssertionError as e:
        return f"fail: {e}"
    return "returned"


@test
def known_gap_follows_the_ledger():
    path = os.path.join(TMP, "ledger")
    with open(path, "w") as f:
        f.write(LEDGER_TEXT)
    saved = harness.LEDGER
    harness.LEDGER = harness.read_ledger(path)
    try:
        g = harness.LEDGER["sample_gap"]
        check(g["covers"] == "a condition over two lines" and g["cap"] == 3 and g["unit"] == "waits" and
              g["where"] == [("test_harness.py", "known_gap_follows_the_ledger"), ("test_futex.py", "some_test")],
              f"the entry read back wrong: {g}")
        check(outcome("sample_gap", 3) == "gap", "a listed gap within its cap did not end as a gap")
        check(outcome("sample_gap", 4).startswith("fail: known gap sample_gap past its cap"),
              f"a gap past its cap: {outcome('sample_gap', 4)}")
        check(outcome("other_gap", 0).startswith("fail: known gap other_gap is not in"),
              f"a gap not in the ledger: {outcome('other_gap', 0)}")
        harness._running.append("another_test")
        try:
            check(outcome("sample_gap", 1).startswith("fail: known gap sample_gap is test_harness.py"),
                  f"a gap from a test its entry does not name: {outcome('sample_gap', 1)}")
        finally:
            harness._running.pop()
    finally:
        harness.LEDGER = saved


@test
def the_ledger_names_real_tests():
    # Each entry's tests exist in its file, so no entry is dead text.
    for name, g in harness.LEDGER.items():
        check(g["where"] and all(f for f, _ in g["where"]), f"{name}: a test named before its file")
        for file, t in g["where"]:
            path = os.path.join(ROOT, "tests", "integration", file)
            check(os.path.exists(path), f"{name}: no file {file}")
            src = open(path).read()
            server, _, what = t.partition("_")
            check(f"def {t}(" in src or f'"{t.split("_", 1)[1]}")' in src or f'make({what}' in src,
                  f"{name}: {file} has no test {t}")
        check(g["cap"] > 0 and g["covers"] and g["closes"], f"{name}: an entry without cap, condition or end")


if __name__ == "__main__":
    main()
