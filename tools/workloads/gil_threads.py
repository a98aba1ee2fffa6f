"""CPU-bound Python threads contending for CPython's GIL: THREADS threads
spin for SECONDS each. Each thread times its wall clock from just before
it was made, and its CPU time;
with one thread holding the GIL at a time, the rest of each thread's
wall time is spent waiting for it. Prints one JSON line:
{"pid", "threads", "seconds", "gil_wait_ns", "join_ns"}: gil_wait_ns is
the sum over threads of wall time minus CPU time; join_ns the main thread's
time in Thread.join, waiting for the threads to end.
usage: python3 gil_threads.py [SECONDS] [THREADS]"""
import json
import os
import sys
import threading
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
waited = []


def spin(born):
    # From before the thread was made: a new thread waits for the GIL
    # before any of its Python code runs (0.4 s once, as the other threads
    # spun), and its CPU clock counts from its start.
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 1
    waited.append((time.monotonic_ns() - born) - time.thread_time_ns())


ts = []
for i in range(threads):
    ts.append(threading.Thread(target=spin, args=(time.monotonic_ns(),), name=f"spin-{i}"))
    ts[-1].start()
j0 = time.monotonic_ns()
for t in ts:
    t.join()
join_ns = time.monotonic_ns() - j0
print(json.dumps({"pid": os.getpid(), "threads": threads, "seconds": seconds, "gil_wait_ns": sum(waited),
                  "join_ns": join_ns}))
