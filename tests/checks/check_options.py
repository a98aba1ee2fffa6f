#!/usr/bin/env python3
"""One option, six places, one meaning (issue 40): the getopt table of
user/cli.c, its --help text, the man page (dist/parktrace.8), the bash
completion, docs/options.md and the README's main options name the same
options, with the same short letters and the same choices (`--by
object|class|site`); every option of the contract (docs/contract/cli.md) is
there unless the contract says it is not yet. Prints one PASS or FAIL line
per rule and a DONE line (tests/run.sh)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rule import check  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(path):
    return open(os.path.join(ROOT, path), encoding="utf-8").read()


def getopt_table():
    """{long: short or None} from long_opts."""
    src = read("user/cli.c")
    table = src[src.index("long_opts[] = {"):]
    table = table[:table.index("};")]
    out = {}
    for name, short in re.findall(r'\{"([a-z-]+)",\s*\w+,\s*0,\s*(?:\'(\w)\'|\w+)\}', table):
        out[name] = short or None
    return out


def usage_text():
    """The --help text: the string literals of options_usage, joined."""
    src = read("user/cli.c")
    body = src[src.index("static void options_usage"):]
    body = body[:body.index("\n}\n")]
    text = "".join(re.findall(r'"((?:\\.|[^"\\])*)"', body))
    return text.replace("\\n", "\n")


def spec_entries(specs):
    """Each 'SPEC' ("-p, --pid PID", "--by object|class|site") as
    (long, short, choices); choices is a tuple of words, or ()."""
    out = []
    for spec in specs:
        spec = spec.replace("\\|", "|").replace("\\-", "-")
        longs = re.findall(r"--([a-z][a-z-]*)", spec)
        if not longs:
            continue
        shorts = re.findall(r"(?<![\w-])-([a-zA-Z])\b", spec)
        after = spec.split("--" + longs[0], 1)[1].strip()
        word = after.split()[0] if after.split() else ""
        choices = tuple(word.split("|")) if "|" in word and re.fullmatch(r"[a-z0-9|-]+", word) else ()
        for i, name in enumerate(longs):
            out.append((name, shorts[0] if shorts and i == 0 else None, choices if i == 0 else ()))
    return out


def help_entries():
    specs = []
    for line in usage_text().splitlines():
        m = re.match(r"\s+((?:-\w, )?--[a-z-]+(?:, --[a-z-]+)*(?: \S+)?)", line)
        if m and line.strip().startswith("-"):
            specs.append(m.group(1))
    return spec_entries(specs)


def man_entries():
    lines = read("dist/parktrace.8").splitlines()
    specs = []
    for i, line in enumerate(lines[:-1]):
        if line.strip() == ".TP" and "\\-\\-" in lines[i + 1]:
            spec = re.sub(r"\\f[BIRP]", "", lines[i + 1])
            spec = re.sub(r"^\.\w+\s*", "", spec).replace('"', "").replace("\\-", "-").replace("\\|", "|")
            if not spec.startswith("-- "):
                specs.append(spec)
    return spec_entries(specs)


def table_entries(path, heading=None):
    text = read(path)
    if heading:
        text = text[text.index(heading):]
    specs = []
    for line in text.splitlines():
        m = re.match(r"\|\s*`([^`]+)`\s*\|", line)
        if m and m.group(1).startswith("-"):
            specs.append(m.group(1))
    return spec_entries(specs)


def completion():
    """(every word offered after a dash, {option: its choices})."""
    text = read("dist/parktrace.bash-completion")
    m = re.search(r"if \[\[ \$cur == -\* \]\]; then\s*COMPREPLY=\(\$\(compgen -W '([^']*)'", text)
    words = set(m.group(1).split())
    choices = {}
    for pats, body in re.findall(r"\n\s+([-\w |\\\n]+)\)\n(.*?);;", text, re.S):
        w = re.search(r"compgen (?:-P \"\$pre\" )?-W '([^']*)'", body)
        if not w:
            continue
        for pat in re.findall(r"--([a-z-]+)", pats):
            choices[pat] = tuple(w.group(1).split())
    return words, choices



def main():
    table = getopt_table()
    places = {
        "--help": help_entries(),
        "dist/parktrace.8": man_entries(),
        "docs/options.md": table_entries("docs/options.md"),
    }
    words, completed = completion()
    results = []

    # The same options everywhere.
    names = set(table)
    missing = []
    for where, entries in places.items():
        seen = {e[0] for e in entries}
        missing += [f"{where} lacks --{n}" for n in sorted(names - seen)]
        missing += [f"{where} names --{n}, which user/cli.c has not" for n in sorted(seen - names)]
    offered = {w[2:] for w in words if w.startswith("--") and len(w) > 2}
    missing += [f"the bash completion lacks --{n}" for n in sorted(names - offered)]
    missing += [f"the bash completion offers --{n}, which user/cli.c has not" for n in sorted(offered - names)]
    readme = {e[0] for e in table_entries("README.md", "## Usage")}
    missing += [f"README.md names --{n}, which user/cli.c has not" for n in sorted(readme - names)]
    results.append(check("every_place_names_the_same_options", missing))

    # The same short letters.
    letters = []
    for where, entries in places.items():
        for name, short, _ in entries:
            if name in table and short != table[name]:
                letters.append(f"{where}: --{name} has -{short}, user/cli.c -{table[name]}")
    for name, short in table.items():
        if short and f"-{short}" not in words:
            letters.append(f"the bash completion lacks -{short} (--{name})")
    results.append(check("short_letters_agree", letters))

    # The same choices: the --help text's are the reference.
    want = {name: ch for name, _, ch in places["--help"] if ch}
    differ = []
    for where, entries in list(places.items())[1:]:
        got = {name: ch for name, _, ch in entries if ch}
        for name, ch in want.items():
            if set(got.get(name, ())) != set(ch):
                differ.append(f"{where}: --{name} {'|'.join(got.get(name, ())) or '(no choices)'}, --help {'|'.join(ch)}")
    for name, ch in want.items():
        if name in completed and set(completed[name]) != set(ch):
            differ.append(f"the bash completion: --{name} {' '.join(completed[name])}, --help {'|'.join(ch)}")
        elif name not in completed:
            differ.append(f"the bash completion does not complete --{name}'s {'|'.join(ch)}")
    results.append(check("choices_agree", differ))

    # The contract's options exist, unless it says they do not yet.
    contract = []
    for line in read("docs/contract/cli.md").splitlines():
        m = re.match(r"\|\s*`([^`]+)`\s*\|(.*)", line)
        if not m or "not yet" in m.group(2):
            continue
        for name, _, _ in spec_entries([m.group(1)]):
            if name not in table:
                contract.append(f"docs/contract/cli.md: --{name} is not in user/cli.c")
    results.append(check("contract_options_exist", contract))

    print(f"DONE check_options: {len(results)} of {len(results)} ran")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
