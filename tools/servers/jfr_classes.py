"""JFR's Java waits per class, for checking parktrace against JFR on every
Java wait it reports: jdk.ThreadPark (parktrace's jvm-park rows, by
parkedClass), jdk.JavaMonitorEnter (jvm-monitor, by monitorClass) and
jdk.JavaMonitorWait (jvm-wait, by monitorClass). The recording is read by
java/JfrWaits.java with JFR's consumer API, not `jfr print --json`.

Record with WAIT_JFC (every event of the three types, threshold 0, no
stack traces, so that JFR's own cost stays small):
    jvm_flags = jfr_flags(write_jfc(path_of_a_jfc), name="pt")
then `jcmd PID JFR.dump name=pt filename=REC` while the JVM runs."""
import os
import subprocess

from common import JAVA, JAVA_SRC

WAIT_JFC = """<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="Java waits" description="Every jdk.ThreadPark, jdk.JavaMonitorEnter and jdk.JavaMonitorWait, no stacks">
  <event name="jdk.ThreadPark">
    <setting name="enabled">true</setting>
    <setting name="stackTrace">false</setting>
    <setting name="threshold">0 ms</setting>
  </event>
  <event name="jdk.JavaMonitorEnter">
    <setting name="enabled">true</setting>
    <setting name="stackTrace">false</setting>
    <setting name="threshold">0 ms</setting>
  </event>
  <event name="jdk.JavaMonitorWait">
    <setting name="enabled">true</setting>
    <setting name="stackTrace">false</setting>
    <setting name="threshold">0 ms</setting>
  </event>
</configuration>
"""


def write_jfc(path):
    """Writes WAIT_JFC to PATH; PATH."""
    with open(path, "w") as f:
        f.write(WAIT_JFC)
    return path


def jfr_flags(jfc, name="pt"):
    """The JVM flags that record with JFC from the JVM's start, in a
    recording called NAME (for `jcmd PID JFR.dump name=NAME ...`)."""
    return [f"-XX:StartFlightRecording:name={name},settings={jfc}"]


def jfr_waits(recording, w0_ns=None, w1_ns=None, quick=None):
    """{(kind, class): (count, ns, count_before, ns_before)} with kind
    parktrace's ("jvm-park", "jvm-monitor", "jvm-wait"): the waits that
    began in [w0, w1] and their time in it, and those under way at w0 and
    their time in the window; without a window, every event whole (the
    _before figures 0). QUICK, a dict, gets per (kind, class) how many of
    the waits begun in the window never blocked (JfrWaits.QUICK_NS)."""
    argv = [JAVA, os.path.join(JAVA_SRC, "JfrWaits.java"), recording]
    if w0_ns is not None or w1_ns is not None:
        argv += [str(w0_ns if w0_ns is not None else -2**63), str(w1_ns if w1_ns is not None else 2**63 - 1)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if p.returncode:
        raise RuntimeError(f"JfrWaits exited {p.returncode}: {p.stderr.strip()[-400:]}")
    out = {}
    for line in p.stdout.splitlines():
        kind, cls, n, ns, nb, nsb, q = line.split("\t")
        out[(kind, cls)] = (int(n), int(ns), int(nb), int(nsb))
        if quick is not None:
            quick[(kind, cls)] = int(q)
    return out


def jfr_monitor_owners(recording, w0_ns, w1_ns):
    """{(class, thread, previous_owner): (count, ns)}: JFR's contended
    monitor entries begun in [w0, w1], by who waited and who let the
    monitor go to it (jdk.JavaMonitorEnter's previousOwner)."""
    argv = [JAVA, os.path.join(JAVA_SRC, "JfrMonitorOwners.java"), recording, str(w0_ns), str(w1_ns)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if p.returncode:
        raise RuntimeError(f"JfrMonitorOwners exited {p.returncode}: {p.stderr.strip()[-400:]}")
    out = {}
    for line in p.stdout.splitlines():
        cls, thread, prev, n, ns = line.split("\t")
        out[(cls, thread, prev)] = (int(n), int(ns))
    return out


def jfr_wait_classes(recording, w0_ns=None, w1_ns=None):
    """{class: (count, total_ns)}: the three event types summed per class,
    each wait clipped to [w0, w1] if given; the count is the waits that
    began in the window plus those under way at its start."""
    by = {}
    for (_, cls), (n, ns, nb, nsb) in jfr_waits(recording, w0_ns, w1_ns).items():
        c, t = by.get(cls, (0, 0))
        by[cls] = (c + n + nb, t + ns + nsb)
    return by


if __name__ == "__main__":
    import sys
    if len(sys.argv) not in (2, 4):
        sys.exit("usage: jfr_classes.py RECORDING [W0_EPOCH_NS W1_EPOCH_NS]")
    w = [int(x) for x in sys.argv[2:]] or [None, None]
    for (kind, cls), (n, ns, nb, nsb) in sorted(jfr_waits(sys.argv[1], *w).items(), key=lambda kv: -kv[1][1]):
        print(f"{kind:12} {cls:60} {n + nb:9d} {(ns + nsb) / 1e6:12.1f} ms")
