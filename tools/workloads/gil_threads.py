"""CPU-bound Python threads contending for CPython's GIL: THREADS threads
spin for SECONDS each. Each thread times its own wall clock and CPU time;
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


def spin():
    w0, c0 = time.monotonic_ns(), time.thread_time_ns()
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 1
    waited.append((time.monotonic_ns() - w0) - (time.thread_time_ns() - c0))


ts = [threading.Thread(target=spin, name=f"spin-{i}") for i in range(threads)]
for t in ts:
    t.start()
j0 = time.monotonic_ns()
for t in ts:
    t.join()
join_ns = time.monotonic_ns() - j0
print(json.dumps({"pid": os.getpid(), "threads": threads, "seconds": seconds, "gil_wait_ns": sum(waited),
                  "join_ns": join_ns}))
