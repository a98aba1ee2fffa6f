#!/usr/bin/python3
"""The on-disk cache of unwind tables (--unwind-cache DIR).

A workload built without frame pointers (tests/workloads_src/cfi_locks.c)
locks one mutex from two call paths and times its blocked lock calls per
path. Its stacks can only be whole if its table is right, so every run
checks that each path's waits add up to the time the workload timed. The
first run writes the tables, named by build-id; the second reads them and
builds none; a damaged, foreign or linked file, and a directory others can
write to, are not trusted: the table is built again and stacks stay whole."""
import json
import os
import re
import shutil
import subprocess

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

SRC = os.path.join(ROOT, "tests", "workloads_src", "cfi_locks.c")
EXE = os.path.join(TMP, "cache_locks_nofp")
# The workload times each blocked lock call, which holds its futex waits and
# a few microseconds more (trylock, syscall entry and exit): 0.05% of the
# time here. A path's stacks must hold its own time within 1%; stacks that
# gave one path's waits to the other miss that by more.
TOLERANCE = 0.01
PATHS = {"ingest_record": "ingest_thread", "flush_batch": "flush_thread"}


def build_workload():
    if not os.path.exists(EXE):
        c = subprocess.run(["cc", "-O2", "-g", "-fomit-frame-pointer", "-pthread", "-o", EXE, SRC],
                           capture_output=True, text=True, timeout=120)
        check(c.returncode == 0, f"compiling {SRC} failed: {c.stderr.strip()[-1000:]}")
    out = subprocess.run(["readelf", "-n", EXE], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(m, f"the workload has no build-id: {out[-500:]}")
    return m.group(1)


def traced(cache, tag):
    """Runs the workload under parktrace with CACHE as --unwind-cache;
    returns its self-stats, its stderr, and checks its stacks. Its main
    thread's first wait (-w) asks for its tables, and its threads start
    300 ms later, once they are built (from the cache or not): the waits
    before that are unwound the older way, which can give one call path's
    waits to the other (docs/limits.md)."""
    build_id = build_workload()
    folded, report = os.path.join(TMP, f"cache-{tag}.folded"), os.path.join(TMP, f"cache-{tag}.json")
    p = run_pt(["-f", "json", "--self-stats", "--unwind-cache", cache, "--collapsed", folded,
                "--collapsed-value", "time", "--", EXE, "-t", "6", "-s", "2", "-r", report, "-w", "300"],
               timeout=40)
    check(p.returncode == 0, f"{tag}: parktrace exited {p.returncode}: {p.stderr.strip()[-500:]}")
    stats = dict(re.findall(r"(\w+)=(\d+)", p.stderr))
    check("unwind_cached" in stats and "unwind_cache_stored" in stats,
          f"{tag}: --self-stats gives no unwind_cached / unwind_cache_stored: {p.stderr.strip()[-500:]}")
    wl = json.load(open(report))
    comm = os.path.basename(EXE)[:15]
    lines = [l for l in open(folded).read().splitlines() if l.startswith(comm + ";")]
    for lock in wl["locks"]:
        fn, start = lock["function"], PATHS[lock["function"]]
        us = 0
        for line in lines:
            frames, _, n = line.rpartition(" ")
            f = frames.split(";")
            if f[-1] == "[pthread_mutex]" and fn in f and start in f and f.index(start) < f.index(fn):
                us += int(n)
        want = lock["blocked_ns"] / 1000
        check(want > 0 and abs(us - want) <= TOLERANCE * want,
              f"{tag}: stacks through {start} -> {fn} hold {us} us of mutex waits, the workload timed "
              f"{want:.0f} us; the workload's lines:\n  " + "\n  ".join(lines))
    return {k: int(v) for k, v in stats.items()}, p.stderr, build_id


def table_file(d, bid):
    """The cached table of build-id BID in D: named by the build-id and a
    checksum of the binary's CFI (the key), then the format."""
    names = [n for n in os.listdir(d) if re.fullmatch(bid + r"[0-9a-f]{8}\.v2", n)]
    check(len(names) == 1, f"want one table file for build-id {bid} in {d}, found {os.listdir(d)}")
    return os.path.join(d, names[0])


def cache_dir(name):
    d = os.path.join(TMP, name)
    shutil.rmtree(d, ignore_errors=True)
    return d


@test
def second_run_reads_the_tables_the_first_wrote():
    d = cache_dir("cache-fresh")
    st, _, bid = traced(d, "first")
    check(st["unwind_cache_stored"] >= 2 and st["unwind_cached"] == 0,
          f"first run: stored {st['unwind_cache_stored']} tables (want the workload's and libc's at least), "
          f"read {st['unwind_cached']}")
    f = table_file(d, bid)
    check(os.path.isfile(f), f"no table file {f} for the workload's build-id; the cache holds {os.listdir(d)}")
    mode = os.stat(d).st_mode & 0o777
    check(mode == 0o700, f"the cache directory was created with mode {mode:o}, not 700")
    st2, _, _ = traced(d, "second")
    check(st2["unwind_cache_stored"] == 0 and st2["unwind_cached"] == st["unwind_cache_stored"],
          f"second run: read {st2['unwind_cached']} tables, built and stored {st2['unwind_cache_stored']} "
          f"(the first stored {st['unwind_cache_stored']})")


def damaged(tag, damage):
    """Damages the workload's cached table with DAMAGE(path), then checks
    the next run builds it again and its stacks stay whole."""
    d = cache_dir(f"cache-{tag}")
    _, _, bid = traced(d, f"{tag}-fill")
    f = table_file(d, bid)
    damage(f)
    st, _, _ = traced(d, tag)
    check(st["unwind_cache_stored"] >= 1, f"{tag}: the damaged table was used, not built again "
                                          f"(read {st['unwind_cached']}, stored {st['unwind_cache_stored']})")
    check(os.path.isfile(f) and not os.path.islink(f) and os.stat(f).st_uid == os.geteuid(),
          f"{tag}: the table file was not written again")


def flip_last_bytes(f):
    with open(f, "r+b") as fh:
        fh.seek(-16, os.SEEK_END)
        b = fh.read(16)
        fh.seek(-16, os.SEEK_END)
        fh.write(bytes(x ^ 0x5A for x in b))


def cut_in_half(f):
    os.truncate(f, os.path.getsize(f) // 2)


def link_to_another_table(f):
    """A link to another binary's valid table (libc's, say): followed, it
    would walk the workload's code with the wrong rules."""
    d = os.path.dirname(f)
    other = max((os.path.join(d, n) for n in os.listdir(d) if n != os.path.basename(f)), key=os.path.getsize)
    os.unlink(f)
    os.symlink(other, f)


def foreign_owner(f):
    os.chown(f, NOBODY, NOBODY)


@test
def corrupted_table_is_built_again():
    damaged("corrupt", flip_last_bytes)


@test
def truncated_table_is_built_again():
    damaged("truncated", cut_in_half)


@test
def linked_table_is_not_followed():
    damaged("symlink", link_to_another_table)


@test
def table_of_another_user_is_not_trusted():
    damaged("foreign", foreign_owner)


@test
def directory_others_can_write_is_not_used():
    d = cache_dir("cache-open")
    os.makedirs(d)
    os.chmod(d, 0o777)
    st, err, _ = traced(d, "open-dir")
    said = [l for l in err.splitlines() if "unwind cache" in l]
    check(len(said) == 1 and "writable by other users" in said[0],
          f"want one line saying the cache is writable by other users, got: {said}")
    check(st["unwind_cached"] == 0 and st["unwind_cache_stored"] == 0 and not os.listdir(d),
          f"the open directory was used: read {st['unwind_cached']}, stored {st['unwind_cache_stored']}, "
          f"holds {os.listdir(d)}")


@test
def cache_path_that_is_a_file_is_one_line():
    f = os.path.join(TMP, "cache-is-a-file")
    open(f, "w").write("not a directory\n")
    st, err, _ = traced(f, "file")
    said = [l for l in err.splitlines() if "unwind cache" in l]
    check(len(said) == 1 and said[0].startswith("parktrace: unwind cache") and "not used" in said[0],
          f"want one 'unwind cache ... not used' line, got: {said}")
    check(st["unwind_cache_stored"] == 0, "tables were stored somewhere")


@test
def cache_is_kept_under_its_budget():
    """The cache holds 256 MiB at most, the files written longest ago going
    first: an old 260 MiB file is deleted to make room, and the run's own
    tables are stored."""
    d = cache_dir("cache-budget")
    os.makedirs(d, mode=0o700)
    old = os.path.join(d, "00" * 24 + ".v2")
    with open(old, "wb") as f:
        os.posix_fallocate(f.fileno(), 0, 260 << 20)      # blocks on disk, not a sparse file
    os.utime(old, (1, 1))
    st, _, _ = traced(d, "budget")
    check(not os.path.exists(old), "the oldest file was kept past the cache's 256 MiB")
    check(st["unwind_cache_stored"] >= 2, f"the run stored {st['unwind_cache_stored']} tables")
    used = sum(os.stat(os.path.join(d, n)).st_blocks * 512 for n in os.listdir(d))
    check(used <= 256 << 20, f"the cache holds {used >> 20} MiB")


@test
def no_cache_with_none():
    st, err, _ = traced("none", "none")
    check(st["unwind_cached"] == 0 and st["unwind_cache_stored"] == 0 and "unwind cache" not in err,
          f"--unwind-cache none read {st['unwind_cached']} and stored {st['unwind_cache_stored']} tables; "
          f"stderr: {err.strip()[-300:]}")
    check(not os.path.exists("none"), "a directory named 'none' was created")


if __name__ == "__main__":
    main()
