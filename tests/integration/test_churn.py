#!/usr/bin/python3
"""Blockers that come and go (metrics.md): a run with far more distinct
contended blockers than the kernel's table holds keeps every wait.

tools/workloads/churn_locks.c walks 60 000 mutexes, each locked once by a
leader that holds it 200 us and once by a follower that blocks on it and
times that lock() call: 60 000 contended blockers, each gone after a
fraction of a millisecond, against a table of 32 768 slots."""
import json
import os
import re

from harness import *  # noqa: F401,F403 (paths, test registry, checks, runners)

CHURN = os.path.join(BUILD, "workloads", "churn_locks")
LOCKS = 60000
SLOTS = 32768   # --max-blockers here: smaller than the workload's mutexes


def sleeps_within_calls(got, want, what):
    """The follower times whole lock() calls; the sleeps lie inside them,
    short of them by each call's way into the kernel and back after the
    wake-up: 1% of these 200 us waits on a quiet host, 2.1% and 5.1% seen
    on a busy CI host."""
    check(0.90 * want <= got <= 1.05 * want, f"{what}: parktrace {got} ns, the workload's blocked lock() calls "
          f"{want} ns ({got / want - 1:+.1%}, allowed -10% to +5%)")


def churn_run(by, extra=()):
    report = os.path.join(TMP, f"churn-{by}.json")
    # nice -10: a follower held up past the leader's 200 us hold finds its
    # mutex free; under make test-loaded's busy core and builds of ours
    # beside it, 46 184 of 60 000 blocked once.
    p = run_pt(["-f", "json", "--top", "0", "--by", by, "--max-blockers", str(SLOTS), *extra, "--",
                "nice", "-n", "-10", CHURN, "-p", "4", "-n", str(LOCKS), "-u", "200", "-r", report], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-500:]}")
    wl = json.load(open(report))
    # Below 100%: a follower held up past the leader's hold (a busy machine)
    # finds its mutex free.
    check(wl["blocked"] >= 0.8 * LOCKS, f"the workload barely contended: {wl}")
    final = final_of(json_reports(p.stdout))
    return wl, final, [b for b in final["blockers"] if b["pid"] == wl["pid"] and b["class"] == "pthread_mutex"]


@test
def churn_by_class_keeps_every_wait():
    """--by class: one pthread_mutex row holds every blocked lock() call's
    time, and nothing was dropped though the table filled three times over."""
    wl, final, rows = churn_run("class")
    check(final["totals"]["dropped_events"] == 0, f"dropped_events {final['totals']['dropped_events']} (want 0)")
    check(len(rows) == 1, f"by class, the workload's mutexes should be 1 row, got {len(rows)}")
    sleeps_within_calls(rows[0]["thread_time_ns"], wl["blocked_ns"], "the pthread_mutex class's thread_time_ns")
    # The workload's blocked-on mutexes went through a table of SLOTS: all
    # but what the table still holds at the end were let go.
    live, recycled = final["totals"]["live_blockers"], final["totals"]["recycled_blockers"]
    check(live <= SLOTS, f"live_blockers {live} > the table's {SLOTS} slots")
    check(recycled >= wl["blocked"] - SLOTS, f"recycled_blockers {recycled}: the workload blocked on "
          f"{wl['blocked']} mutexes, the table holds {SLOTS}")
    short = wl["blocked"] - rows[0]["parks"]
    if 0 < short <= 3:
        # A parktrace bug: on this 6.18 kernel a sched_switch now and then
        # never reaches the program (docs/limits.md); a wait whose switch
        # out is lost is not seen at all. Seen once in 60 000.
        known_gap("missed_switch_out_uncounted", f"{rows[0]['parks']} parks for {wl['blocked']} blocked lock() calls "
                  f"({wl['faulted']} of them faulted too: may have slept there, not in the futex)", short)
    # Once under load 635 of 58 636 were short: the message says where they went.
    others = [(b["class"], b["parks"], b["first_stack"][:4]) for b in final["blockers"]
              if b["pid"] == wl["pid"] and b["class"] != "pthread_mutex"]
    check(rows[0]["parks"] >= wl["blocked"], f"{rows[0]['parks']} parks for {wl['blocked']} blocked lock() calls; "
          f"the process's other rows (class, parks, stack): {others}")


@test
def churn_default_view_shows_the_objects_together():
    """By object (the default), the mutexes too small for a row of their own
    are one row of (pid, kind, class, site) with their number of objects:
    the rows add up to every wait and every object."""
    wl, final, rows = churn_run("object")
    check(final["totals"]["dropped_events"] == 0, f"dropped_events {final['totals']['dropped_events']} (want 0)")
    objects = sum(b.get("objects", 1) for b in rows)
    short = wl["blocked"] - objects
    check(short <= 3, f"the rows stand for {objects} objects, the workload blocked on {wl['blocked']}")
    sleeps_within_calls(sum(b["thread_time_ns"] for b in rows), wl["blocked_ns"], "the rows' thread_time_ns")
    if short > 0:
        # 59 509 of 59 510 once under load: as in churn_by_class_keeps_every_wait.
        known_gap("missed_switch_out_uncounted", f"the rows stand for {objects} objects, the workload blocked "
                  f"on {wl['blocked']} ({wl['faulted']} of its blocked calls faulted too: may have slept there, "
                  "not in the futex)", short)


@test
def churned_mutexes_are_named_when_the_budget_is_spent():
    """A new mutex's class comes from its first waiter's stack, which the
    stack budget leaves out once spent; its class is then read off the
    instruction the wait was at (inside __lll_lock_wait). At a budget of
    0.02% (0.05% once left only 14% out on a CI host), most naming stacks are left out (the premise, checked: rows with
    no first stack), and still every blocked-on mutex is a pthread_mutex."""
    report = os.path.join(TMP, "churn-spent.json")
    p = run_pt(["-f", "json", "--top", "0", "--stack-budget", "0.02", "--", CHURN, "-p", "4", "-n", "12000",
                "-u", "200", "-r", report], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-500:]}")
    wl = json.load(open(report))
    mine = [b for b in final_of(json_reports(p.stdout))["blockers"] if b["pid"] == wl["pid"]]
    mutexes = [b for b in mine if b["class"] == "pthread_mutex"]
    stackless = sum(b["objects"] for b in mine if not b["first_stack"])
    check(stackless >= wl["blocked"] // 4, f"only {stackless} of {wl['blocked']} mutexes went without their "
          "naming stack: the budget was not spent (the premise)")
    named = sum(b["objects"] for b in mutexes)
    others = [(b["class"], b["parks"], b["first_stack"][:2]) for b in mine if b["class"] != "pthread_mutex"]
    # The main thread's joins of its 4 pairs' 8 threads are its only other
    # waits (each can sleep: pairs held up by the host finish apart).
    check(named >= wl["blocked"] and sum(n for _, n, _ in others) <= 8,
          f"{named} pthread_mutex objects for the workload's {wl['blocked']} blocked-on mutexes; other rows "
          f"(class, parks, stack): {others[:8]}")


@test
def a_large_table_costs_memory_only_as_it_fills():
    """The kernel maps a BPF array into the process whole, every page
    resident: a table of 262 144 slots is 144 MiB. Mapped as its slots are
    handed out, a run over 4 000 mutexes stays far below that, and still
    keeps every wait."""
    report = os.path.join(TMP, "churn-large-table.json")
    p = run_pt(["-f", "json", "--top", "0", "--by", "class", "--max-blockers", "262144", "--self-stats", "--",
                CHURN, "-p", "2", "-n", "4000", "-u", "200", "-r", report], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-500:]}")
    wl = json.load(open(report))
    rows = [b for b in final_of(json_reports(p.stdout))["blockers"]
            if b["pid"] == wl["pid"] and b["class"] == "pthread_mutex"]
    check(rows and rows[0]["parks"] >= wl["blocked"], f"parks {rows and rows[0]['parks']} for {wl['blocked']} "
          "blocked lock() calls")
    rss = int(re.search(r"rss_kb=(\d+)", p.stderr).group(1))
    check(rss < 64 * 1024, f"parktrace's RSS {rss // 1024} MiB with a 144 MiB table barely used")


@test
def exited_processes_leave_the_table_and_the_stack_cache():
    """A machine starts processes all day: one that exits must leave the
    kernel's table and the stack cache at once (once a second), whatever
    room the table has, and what it counted must stay in the report. Five
    churn_locks children, one after another, each with 400 contended mutexes
    (far below an eighth of the table, so only their exits can let them
    go), then the driver idles 3 s."""
    runs, locks = 5, 400
    reports = [os.path.join(TMP, f"exit-{i}.json") for i in range(runs)]
    script = "; ".join(f"{CHURN} -p 2 -n {locks} -u 200 -r {r}" for r in reports) + "; sleep 3"
    p = run_pt(["-f", "json", "--top", "0", "--by", "class", "--self-stats", "--", "sh", "-c", script], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-500:]}")
    wls = [json.load(open(r)) for r in reports]
    final = final_of(json_reports(p.stdout))
    t = final["totals"]
    blocked = sum(w["blocked"] for w in wls)
    check(t["recycled_blockers"] >= blocked, f"recycled_blockers {t['recycled_blockers']}: the {runs} exited "
          f"children blocked on {blocked} mutexes, all of which should have left the table")
    check(t["live_blockers"] <= 10, f"live_blockers {t['live_blockers']} after every child exited (want the driver's few)")
    m = re.search(r"stack_entries=(\d+) stack_templates=(\d+)", p.stderr)
    check(m, f"--self-stats printed no stack_entries: {p.stderr[-800:]}")
    check(int(m.group(1)) <= 20, f"the stack cache still holds {m.group(1)} entries of exited processes "
          f"(templates {m.group(2)})")
    # What they counted stays: per child, every blocked lock() call is in
    # its class row, and that row's time against the child's own timing.
    missed = []
    for w in wls:
        mine = [b for b in final["blockers"] if b["pid"] == w["pid"]]
        rows = [b for b in mine if b["class"] == "pthread_mutex"]
        check(len(rows) == 1, f"child {w['pid']}: {len(rows)} pthread_mutex rows (want 1)")
        others = {b["class"]: (b["parks"], b["thread_time_ns"]) for b in mine if b is not rows[0]}
        # Its main thread's joins of its 2 pairs' 4 threads are its only
        # other waits (a pair held up by the host finishes later, so up to
        # all 4 joins sleep): more there are mutex waits that went unnamed.
        check(sum(parks for parks, _ in others.values()) <= 4,
              f"child {w['pid']}: pthread_mutex {rows[0]['parks']} parks, {rows[0]['thread_time_ns']} ns of the "
              f"workload's {w['blocked']} calls, {w['blocked_ns']} ns; its other rows (parks, ns) {others}")
        short = w["blocked"] - rows[0]["parks"]
        if 0 < short <= 3:
            # The switch out the program never saw (as in
            # churn_by_class_keeps_every_wait): once in 2 000 in a CI run.
            missed.append((short, f"child {w['pid']}: {rows[0]['parks']} parks for its {w['blocked']} blocked "
                                  "lock() calls"))
        else:
            check(short <= 0, f"child {w['pid']}: {rows[0]['parks']} parks for its {w['blocked']} blocked "
                  "lock() calls")
        sleeps_within_calls(rows[0]["thread_time_ns"], w["blocked_ns"],
                            f"child {w['pid']}'s pthread_mutex time (its other rows (parks, ns): {others})")
    if missed:
        known_gap("missed_switch_out_uncounted", "; ".join(m for _, m in missed), sum(n for n, _ in missed))


@test
def exited_processes_fold_past_the_recycled_budget():
    """What recycled blockers of exited processes counted is kept within
    --recycled-budget: past it, their sites fold together under pid 0, per
    command (or, still over, per class), and their totals stay exact. Eight
    churn_locks children, one after another, with a budget of 16 KiB
    (a few sites' worth)."""
    runs, locks = 8, 300
    reports = [os.path.join(TMP, f"fold-{i}.json") for i in range(runs)]
    script = "; ".join(f"{CHURN} -p 2 -n {locks} -u 200 -r {r}" for r in reports) + "; sleep 2"
    p = run_pt(["-f", "json", "--top", "0", "--by", "class", "--self-stats", "--recycled-budget", "16", "--",
                "sh", "-c", script], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-500:]}")
    wls = [json.load(open(r)) for r in reports]
    final = final_of(json_reports(p.stdout))
    m = re.search(r"retired_kb=(\d+) retired_budget_kb=(\d+) retired_folds=(\d+)", p.stderr)
    check(m, f"--self-stats printed no retired_folds: {p.stderr[-800:]}")
    check(int(m.group(2)) == 16, f"retired_budget_kb {m.group(2)} (asked for 16)")
    check(int(m.group(3)) > 0, f"no fold with {runs} exited children's sites over a 16 KiB budget")
    folded = [b for b in final["blockers"] if b["pid"] == 0 and b["class"] == "pthread_mutex"]
    check(folded, "no pid 0 (exited, folded) pthread_mutex row: " +
          json.dumps([(b["pid"], b["comm"], b["class"]) for b in final["blockers"]]))
    check(all(b["comm"] in ("churn_locks", "[exited]") for b in folded),
          f"folded rows name {[b['comm'] for b in folded]} (want the command, or [exited] past the budget)")
    rows = [b for b in final["blockers"] if b["class"] == "pthread_mutex"]
    within(sum(b["thread_time_ns"] for b in rows), sum(w["blocked_ns"] for w in wls), 0.05,
           "pthread_mutex time of every child, folded or not")
    parks, blocked = sum(b["parks"] for b in rows), sum(w["blocked"] for w in wls)
    if parks < blocked:
        # The switch out the program never saw, as in the tests above
        # (2 389 parks for 2 390 calls once); past the cap it fails.
        known_gap("missed_switch_out_uncounted", f"pthread_mutex parks {parks} < the children's blocked lock() "
                  f"calls {blocked}", blocked - parks)


@test
def a_live_process_at_ever_new_sites_stays_in_the_recycled_budget():
    """Issue 39: recycled blockers' sites were folded only once their
    process exited, so a process that lives on making lock objects at
    ever new sites grew them past --recycled-budget without bound. One
    churn_locks whose blocked lock() calls are made at 256 sites (as many
    retired sites, some 1.5 KiB each), with a budget of 64 KiB and a table
    of 4096 slots: its sites fold while it runs, to one "[folded]" site per
    class, and its totals stay exact. The process is a local user's
    (nobody's), as the hostile one of docs/security.md is."""
    # The report in a directory of nobody's: the workload writes it as nobody.
    rep = os.path.join(nobody_dir("pt-sites-"), "sites.json")
    # Every stack taken (--stacks all): a churned mutex is named from its
    # one wait's stack, which the stack budget may leave out (docs/limits.md;
    # 692 of 11 988 in one CI run), and the folds are the subject.
    # setpriv execs the workload in the process parktrace starts: the pid
    # it traces is the workload's.
    p = run_pt(["-f", "json", "-i", "500ms", "--top", "0", "--self-stats", "--stacks", "all", "--max-blockers", "4096",
                "--recycled-budget", "64", "--", *AS_NOBODY,
                CHURN, "-p", "2", "-n", "12000", "-u", "200", "-s", "256", "-r", rep], timeout=120)
    check(p.returncode == 0, f"parktrace exited {p.returncode}: {p.stderr.strip()[-500:]}")
    # The premise: the workload ran as nobody (its report is nobody's file).
    check(os.stat(rep).st_uid == NOBODY, f"the workload's report is uid {os.stat(rep).st_uid}'s, not nobody's")
    wl = json.load(open(rep))
    reports = json_reports(p.stdout)
    final = final_of(reports)
    m = re.search(r"retired_kb=(\d+) retired_budget_kb=(\d+) retired_folds=(\d+)", p.stderr)
    check(m, f"--self-stats printed no retired_folds: {p.stderr[-800:]}")
    check(int(m.group(3)) > 0, "no fold with 256 sites over a 64 KiB budget")
    check(int(m.group(1)) <= 2 * 64, f"recycled sites take {m.group(1)} KiB, budget 64")
    # While it ran: its own rows, some of them folded.
    live = [b for r in reports if r["type"] == "interval" for b in r["blockers"] if b["pid"] == wl["pid"]]
    check(any(b["top_frame"] == "[folded]" for b in live),
          "no [folded] row of the live process: " + json.dumps(sorted({b["top_frame"] for b in live})[:12]))
    # Once it exited its rows may have folded under pid 0: all count.
    check(final["totals"]["dropped_events"] == 0, f"{final['totals']['dropped_events']} waits dropped")
    rows = [b for b in final["blockers"] if b["class"] == "pthread_mutex"]
    got = sum(b["thread_time_ns"] for b in rows)
    others = [(b["pid"], b["class"], b["top_frame"], b["parks"], b["thread_time_ns"]) for b in final["blockers"]
              if b["class"] != "pthread_mutex"]
    check(abs(got - wl["blocked_ns"]) <= 0.05 * wl["blocked_ns"],
          f"pthread_mutex time, folded or not: {got} ns, the workload timed {wl['blocked_ns']} ns; parks "
          f"{sum(b['parks'] for b in rows)} of {wl['blocked']}; other rows {others}")
    # A mutex whose one wait went without its naming stack (the stack
    # budget spent, as on a busy host) is classed futex: its park is in a
    # futex row, beside the main thread's few pthread_join waits.
    named = sum(b["parks"] for b in rows)
    futex = sum(b["parks"] for b in final["blockers"] if b["class"] == "futex")
    check(named + futex >= wl["blocked"] and named >= 0.95 * wl["blocked"],
          f"pthread_mutex parks {named} and futex parks {futex}, for the workload's {wl['blocked']} blocked lock() "
          f"calls")


if __name__ == "__main__":
    main()
