import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * The Java waits of a JFR recording per kind and class, as parktrace
 * groups them: jdk.ThreadPark by parkedClass (parktrace's jvm-park),
 * jdk.JavaMonitorEnter by monitorClass (jvm-monitor) and
 * jdk.JavaMonitorWait by monitorClass (jvm-wait). Optionally inside a
 * window of wall-clock time (parktrace's run): each wait clipped to the
 * window, as parktrace charges a wait to a window, counted apart when it
 * was already under way at the window's start. Read with JFR's own consumer API (`jfr print --json` of a busy
 * recording is hundreds of megabytes). One line per kind and class:
 *   kind<TAB>class<TAB>count<TAB>ns<TAB>count_before<TAB>ns_before<TAB>quick
 * where quick is how many of the waits begun in the window lasted under
 * QUICK_NS: calls that may never have blocked.
 * (without a window, every event is in count/ns and the _before columns
 * are 0). A JavaMonitorWait's duration runs to its return from
 * Object.wait, so it includes re-entering the monitor after the notify.
 * usage: java JfrWaits.java RECORDING [WINDOW_START_EPOCH_NS WINDOW_END_EPOCH_NS]
 */
public class JfrWaits {
    /* A park that finds its permit returns in a few hundred ns; one that
     * loses a race on its way to sleep (the Parker's mutex busy, or a futex
     * word already changed) in 2-4 us, a peak of its own in HSQLDB's nonfair
     * lock; one that sleeps and is woken rarely takes under 8 us. */
    static final long QUICK_NS = 8000;

    static long ns(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    public static void main(String[] args) throws Exception {
        long w0 = args.length > 2 ? Long.parseLong(args[1]) : Long.MIN_VALUE;
        long w1 = args.length > 2 ? Long.parseLong(args[2]) : Long.MAX_VALUE;
        Map<String, long[]> by = new TreeMap<>();
        try (RecordingFile f = new RecordingFile(Path.of(args[0]))) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                String kind, field;
                switch (e.getEventType().getName()) {
                    case "jdk.ThreadPark":
                        kind = "jvm-park";
                        field = "parkedClass";
                        break;
                    case "jdk.JavaMonitorEnter":
                        kind = "jvm-monitor";
                        field = "monitorClass";
                        break;
                    case "jdk.JavaMonitorWait":
                        kind = "jvm-wait";
                        field = "monitorClass";
                        break;
                    default:
                        continue;
                }
                long s = ns(e.getStartTime()), t = ns(e.getEndTime());
                if (s > w1 || t < w0)
                    continue;
                long clipped = Math.min(t, w1) - Math.max(s, w0);
                RecordedClass c = e.getValue(field);
                String name = c == null ? "<no blocker>" : c.getName();
                long[] v = by.computeIfAbsent(kind + "\t" + name, k -> new long[5]);
                int at = s >= w0 ? 0 : 2;
                v[at] += 1;
                v[at + 1] += clipped;
                if (at == 0 && t - s < QUICK_NS)
                    v[4] += 1;
            }
        }
        for (Map.Entry<String, long[]> c : by.entrySet()) {
            long[] v = c.getValue();
            System.out.println(c.getKey() + "\t" + v[0] + "\t" + v[1] + "\t" + v[2] + "\t" + v[3] + "\t" + v[4]);
        }
    }
}
