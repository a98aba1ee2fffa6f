"""What the repository checks share: one rule's verdict, printed as the
PASS or FAIL line tests/run.sh counts."""


def check(name, problems):
    """PASS NAME when PROBLEMS is empty, else FAIL NAME and the first 40."""
    if problems:
        print(f"FAIL {name}: {len(problems)} problem(s)")
        for p in problems[:40]:
            print("    " + p)
    else:
        print(f"PASS {name}")
    return not problems
