#!/usr/bin/python3
"""Wait chains (metrics.md, "Wait chains"): a wait whose lock's holder is
itself waiting is charged to the chain down to where the time is lost.

tools/workloads/chain_locks.c builds chains it knows, round after round, and
times the part of its first link's waits during which the whole chain stood:
a mutex chain ending in a sleep or in fsync, a two-lock deadlock (broken by
timeouts), and a chain across two processes (a process-shared mutex)."""
import json
import os
import re

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

CHAINS = os.path.join(BUILD, "workloads", "chain_locks")
ROUNDS, HOLD_MS = 12, 60


# A container's PID namespace (and a /proc of its own), as in test_containers.
IN_CONTAINER = ["unshare", "--pid", "--fork", "--mount", "--mount-proc"]


def chain_run(mode, extra=(), rounds=ROUNDS, wrap=()):
    report = os.path.join(TMP, f"chain-{mode}.json")
    p = run_pt(["-f", "json", "--top", "0", *extra, "--", *wrap, CHAINS, "-m", mode, "-n", str(rounds), "-h",
                str(HOLD_MS), "-d", TMP, "-r", report], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-500:]}")
    reports = json_reports(p.stdout)
    return json.load(open(report)), reports, final_of(reports)


def threads(ch):
    return [link["thread"] for link in ch["links"]]


def describe(chains):
    return [(round(c["time_ns"] / 1e6, 1), c["waits"], threads(c), c["end"]) for c in chains[:6]]


def chain_of(final, names, end=None):
    """The chain whose links are the threads NAMES (and whose end is END):
    the one with the most time, where a link's class or site, or the
    kernel function of an `io` end (end_frame), tells several apart."""
    got = [c for c in final["chains"] if threads(c) == names and (end is None or c["end"] == end)]
    # Grouped by each link's (thread, kind, class, site) and the end: two
    # chains of the same threads may differ in a link's class or site (a CI
    # run: 722 ms and one 0.4 ms wait, their links not printed).
    ends = [(c["end"], c["end_frame"], tuple((l["kind"], l["class"], l["top_frame"]) for l in c["links"]))
            for c in got]
    check(len(set(ends)) == len(ends), f"chains are grouped by their links and end: {describe(got)} {ends}")
    return max(got, key=lambda c: c["time_ns"]) if got else None


def explains(ch, wl, what, final=None):
    """The chain's time against the part of the workload's waits during
    which that chain stood: within 10%. A miss names the chains its first
    thread heads, where the rest of the time went."""
    check(ch is not None, f"{what}: no such chain")
    others = [c for c in (final or {}).get("chains", []) if c["links"] and threads(c)[0] == threads(ch)[0]]
    totals = (final or {}).get("totals", {})
    lost = {k: totals.get(k) for k in ("stack_samples_lost", "chains_unread")}
    within(ch["time_ns"], wl["chain_ns"], 0.10, f"{what}'s time (its first thread's chains: {describe(others)}; "
           f"waits left without a stack or chain: {lost})")


@test
def a_mutex_chain_ends_in_its_last_holders_sleep():
    """worker -[A]-> flusher -[B]-> writer, who holds B through a timed
    sleep: the worker's waits are the top chain's, ending `sleeping`."""
    wl, _, final = chain_run("sleep")
    ch = chain_of(final, ["worker", "flusher", "writer"], "sleeping")
    explains(ch, wl, "worker -[A]-> flusher -[B]-> writer (sleeping)", final)
    check(ch and ROUNDS * 0.8 <= ch["waits"] <= ROUNDS, f"waits {ch and ch['waits']} for {ROUNDS} rounds")
    top = [c for c in final["chains"] if threads(c)[0] == "worker"][0]
    check(top is ch, f"the worker's top chain is not the whole one: {describe(final['chains'])}")
    links = ch["links"]
    check(all(link["pid"] == wl["pid"] for link in links), f"pids {[link['pid'] for link in links]}")
    check([link["class"] for link in links] == ["pthread_mutex", "pthread_mutex", None],
          f"classes {[link['class'] for link in links]}")
    last = links[-1]
    check(all(last[k] is None for k in ("kind", "class", "id", "name", "top_frame")),
          f"the last link waits on nothing: {last}")


@test
def a_chain_that_ends_in_fsync_ends_in_io():
    """The writer holds B through write + fsync of a file: the worker's
    chain ends `io` (task state D) for most of its time, `running` for the
    writes in between."""
    wl, _, final = chain_run("io")
    names = ["worker", "flusher", "writer"]
    io = chain_of(final, names, "io")
    check(io is not None, f"no chain ending in io: {describe(final['chains'])}")
    whole = sum(c["time_ns"] for c in final["chains"] if threads(c) == names)
    within(whole, wl["chain_ns"], 0.10, "worker -[A]-> flusher -[B]-> writer, all its ends")
    check(io and io["time_ns"] >= 0.3 * whole, f"io {io and io['time_ns']} ns of {whole}: the writer spends its "
          f"hold in fsync; {describe(final['chains'])}")
    # Where the kernel holds the writer: past the system call and the VFS,
    # the file system's fsync (ext4_sync_file here), not the scheduler.
    frame = io and io["end_frame"]
    check(frame and not re.match(r"(__)?(io_)?schedule|bit_wait|__wait|wait_", frame) and "sync" in frame,
          f"the io chain's end_frame {frame!r}")


@test
def a_chain_follows_its_lock_to_its_next_owner():
    """worker and flusher wait on A, held by keeper; keeper lets go and A
    passes to the flusher, who waits on B behind the writer: the worker's
    chain, read as its wait began through keeper, is read again as A
    changes hands, and stands as worker -[A]-> flusher -[B]-> writer for
    the rest of the wait."""
    wl, _, final = chain_run("handoff")
    ch = chain_of(final, ["worker", "flusher", "writer"], "sleeping")
    explains(ch, wl, "after the hand-off, worker -[A]-> flusher -[B]-> writer (sleeping)", final)


@test
def a_deadlock_is_a_cycle():
    """locker1 holds A and waits on B, locker2 holds B and waits on A, each
    until its timeout: one cycle, both lockers' waits in it, starting at
    the lower thread id."""
    wl, _, final = chain_run("deadlock")
    cycles = [c for c in final["chains"] if c["cycle"]]
    check(len(cycles) == 1, f"{len(cycles)} cycles: {describe(final['chains'])}")
    ch = cycles[0] if cycles else None
    check(ch and ch["end"] == "cycle" and sorted(threads(ch)) == ["locker1", "locker2"],
          f"the cycle: {ch and describe([ch])}")
    explains(ch, wl, "the deadlock's cycle", final)


@test
def a_chain_crosses_processes():
    """client -[M]-> holder (another process, M process-shared) -[B]->
    sleeper: one chain across both processes."""
    wl, _, final = chain_run("cross")
    ch = chain_of(final, ["client", "holder", "sleeper"], "sleeping")
    explains(ch, wl, "client -[M]-> holder -[B]-> sleeper", final)
    pids = [link["pid"] for link in ch["links"]] if ch else []
    check(len(pids) == 3 and pids[0] == wl["pid"] and pids[1] == pids[2] != pids[0],
          f"the chain's pids {pids}: the client's, then the child's twice (client pid {wl['pid']})")


@test
def a_condition_chain_follows_its_waker():
    """consumer -[condition variable]-> producer -[B]-> writer: a condition
    records no owner, so the thread that woke the consumer there last (the
    producer) stands in for one."""
    wl, _, final = chain_run("cond")
    ch = chain_of(final, ["consumer", "producer", "writer"], "sleeping")
    explains(ch, wl, "consumer -[cond]-> producer -[B]-> writer (sleeping)", final)
    check(ch and ch["links"][0]["class"] == "pthread_cond" and ch["links"][1]["class"] == "pthread_mutex",
          f"the links' classes: {ch and [link['class'] for link in ch['links']]}")


@test
def a_waker_that_changes_stands_in_for_no_one():
    """consumer -[condition variable]-> producer1 or producer2, who take
    turns signalling it, two rounds each: on each of the condition's
    futex words its wakers alternate, so the last one says nothing of who
    will signal next, and no chain goes through the condition."""
    wl, _, final = chain_run("turns")
    through = [c for c in final["chains"] if threads(c)[0] == "consumer" and c["links"][0]["class"] == "pthread_cond"]
    took = sum(c["time_ns"] for c in through)
    check(took <= 0.05 * wl["wait_ns"], f"chains through the condition hold {took} ns of the consumer's "
          f"{wl['wait_ns']} ns: {describe(through)}")


def java_chain_run(mode, wrap=(), rounds=ROUNDS):
    report = os.path.join(TMP, f"chain-java-{mode}.json")
    # 1.5 s first: the JVM found and its layout read before the rounds.
    p = run_pt(["-f", "json", "--top", "0", "--", *wrap, "java", "-Xmx128m", "-cp", JAVA_CP, "ChainLocks",
                str(rounds), str(HOLD_MS), report, "1500", mode], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-500:]}")
    return json.load(open(report)), final_of(json_reports(p.stdout))


@test
def a_java_lock_chain_follows_its_owners():
    """worker -[ReentrantLock a]-> flusher -[ReentrantLock b]-> writer, who
    holds b through Thread.sleep (tools/workloads/ChainLocks.java): each
    java.util.concurrent lock's owner is its exclusiveOwnerThread, and the
    writer's sleep (a JVM park of its own) ends the chain, sleeping."""
    wl, final = java_chain_run("lock")
    ch = chain_of(final, ["worker", "flusher", "writer"], "sleeping")
    explains(ch, wl, "worker -[ReentrantLock]-> flusher -[ReentrantLock]-> writer (sleeping)", final)
    check(ch and all(link["kind"] == "jvm-park" and link["class"].endswith("ReentrantLock$NonfairSync")
                     for link in ch["links"][:2]), f"the links: {ch and ch['links']}")


@test
def a_java_monitor_chain_crosses_to_a_lock_and_a_wait():
    """worker -[synchronized m]-> flusher -[ReentrantLock b]-> writer, who
    holds b through Object.wait on an object of its own: the monitor's
    owner is its ObjectMonitor's, the lock's its exclusiveOwnerThread, and
    the writer's Object.wait, which no thread holds, ends the chain,
    sleeping."""
    wl, final = java_chain_run("monitor")
    ch = chain_of(final, ["worker", "flusher", "writer"], "sleeping")
    explains(ch, wl, "worker -[synchronized]-> flusher -[ReentrantLock]-> writer (sleeping)", final)
    kinds = [(link["kind"], link["class"]) for link in ch["links"]] if ch else []
    check(len(kinds) == 3 and kinds[0] == ("jvm-monitor", "java.lang.Object") and kinds[1][0] == "jvm-park"
          and kinds[1][1].endswith("ReentrantLock$NonfairSync"), f"the links (kind, class): {kinds}")


@test
def a_java_condition_chain_follows_its_waker():
    """worker -[a Condition]-> flusher, who signals it once it got b
    -[ReentrantLock b]-> writer (Thread.sleep): a java.util.concurrent
    condition records no owner, so the thread that woke the worker there
    stands in, as on a native condition variable. 30 rounds: the stand-in
    is made by two wakes in a row, and the JIT's first compiles, which make
    the worker wait on HotSpot's own locks in between, can put it off a
    round or two past the workload's two uncounted ones (two CI runs in a
    row lost two of 12 rounds' chains, 17%); two of 30 stay within 10%."""
    wl, final = java_chain_run("condition", rounds=30)
    ch = chain_of(final, ["worker", "flusher", "writer"], "sleeping")
    explains(ch, wl, "worker -[ConditionObject]-> flusher -[ReentrantLock]-> writer (sleeping)", final)
    check(ch and ch["links"][0]["class"].endswith("ConditionObject") and
          ch["links"][1]["class"].endswith("ReentrantLock$NonfairSync"),
          f"the links' classes: {ch and [link['class'] for link in ch['links']]}")


@test
def chains_in_a_container_find_their_holders():
    """In a PID namespace of its own (a container's), a mutex's __owner and
    a Java lock's thread id are the namespace's: each holder is found by
    the host's id all the same, for C and for Java."""
    wl, _, final = chain_run("sleep", wrap=IN_CONTAINER)
    ch = chain_of(final, ["worker", "flusher", "writer"], "sleeping")
    explains(ch, wl, "in a container, worker -[A]-> flusher -[B]-> writer (sleeping)", final)
    wl, final = java_chain_run("lock", wrap=IN_CONTAINER)
    ch = chain_of(final, ["worker", "flusher", "writer"], "sleeping")
    explains(ch, wl, "in a container, worker -[ReentrantLock]-> flusher -[ReentrantLock]-> writer (sleeping)", final)


@test
def interval_chains_add_up_to_the_final():
    """Each interval report carries the chains' time in its window: over
    the windows, a chain's time is the final report's."""
    wl, reports, final = chain_run("sleep", ("-i", "1s"), rounds=40)
    names = ["worker", "flusher", "writer"]
    windows = [r for r in reports if r["type"] == "interval"]
    check(len(windows) >= 2, f"{len(windows)} interval reports")
    summed = sum(c["time_ns"] for r in windows for c in r["chains"] if threads(c) == names and c["end"] == "sleeping")
    ch = chain_of(final, names, "sleeping")
    check(ch is not None, f"no final chain: {describe(final['chains'])}")
    # The last window ends before the final report: the final may hold a little more.
    check(ch and 0.9 * ch["time_ns"] <= summed <= ch["time_ns"] * 1.001,
          f"the windows' chain time {summed} ns, the final's {ch and ch['time_ns']} ns")


@test
def chains_off_reads_none_and_counts_the_same():
    """--chains 0 lists no chain, and the rows count what they counted."""
    wl, _, final = chain_run("sleep", ("--chains", "0"), rounds=6)
    check(final["chains"] == [], f"--chains 0 listed {describe(final['chains'])}")
    rows = [b for b in final["blockers"] if b["pid"] == wl["pid"] and b["class"] == "pthread_mutex"]
    first = [b for b in rows if b["first_thread"] == "worker"]
    check(first and first[0]["parks"] >= 6, f"the worker's mutex row: {[(b['first_thread'], b['parks']) for b in rows]}")


@test
def top_n_chains_only():
    """--chains 1 lists the top chain alone: the one with the most time."""
    _, _, final = chain_run("sleep", ("--chains", "1"), rounds=6)
    check(len(final["chains"]) == 1, f"{len(final['chains'])} chains listed for --chains 1")


if __name__ == "__main__":
    main()
