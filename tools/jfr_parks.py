"""jdk.ThreadPark events of a JFR recording, summed per blocker class, for
checking parktrace against JFR (tests/integration/test_jfr.py and the
benchmark's accuracy table)."""
import collections
import json
import re
import subprocess

JFR = "/usr/lib/jvm/java-17-openjdk-amd64/bin/jfr"

# JDK Flight Recorder as a Java developer would turn it on for contention:
# every jdk.ThreadPark and jdk.JavaMonitorEnter, threshold 0, with its stack
# trace. A .jfc names only the events it enables; every other event stays off
# (checked: `jfr summary` of such a recording lists no other event, only
# JFR's own metadata and checkpoints). "JFR default" is JFR's shipped
# default.jfc, what `-XX:StartFlightRecording` alone records.
PARK_JFC = """<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="Contention" description="Every jdk.ThreadPark and jdk.JavaMonitorEnter, with stacks">
  <event name="jdk.ThreadPark">
    <setting name="enabled">true</setting>
    <setting name="stackTrace">true</setting>
    <setting name="threshold">0 ms</setting>
  </event>
  <event name="jdk.JavaMonitorEnter">
    <setting name="enabled">true</setting>
    <setting name="stackTrace">true</setting>
    <setting name="threshold">0 ms</setting>
  </event>
</configuration>
"""


def iso_duration_ns(s):
    """java.time.Duration's ISO-8601 text ("PT0.004123S", "PT1M2.5S") in ns."""
    m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d{1,9}))?S)?", s)
    if m is None:
        raise ValueError(f"unexpected JFR duration {s!r}")
    h, mi, sec, frac = m.groups()
    return ((int(h or 0) * 60 + int(mi or 0)) * 60 + int(sec or 0)) * 10**9 + int((frac or "").ljust(9, "0"))


def jfr_parks(recording):
    """Per blocker class (parktrace's spelling, "<no blocker>" for none):
    [parks, total duration ns]."""
    p = subprocess.run([JFR, "print", "--events", "jdk.ThreadPark", "--json", "--stack-depth", "1", recording],
                       capture_output=True, text=True, timeout=120)
    if p.returncode:
        raise RuntimeError(f"jfr print: {p.stderr.strip()}")
    by_class = collections.defaultdict(lambda: [0, 0])
    for ev in json.loads(p.stdout)["recording"]["events"]:
        v = ev["values"]
        cls = v["parkedClass"]["name"].replace("/", ".") if v["parkedClass"] else "<no blocker>"
        by_class[cls][0] += 1
        by_class[cls][1] += iso_duration_ns(v["duration"])
    return by_class
