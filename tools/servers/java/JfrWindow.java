import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * jdk.ThreadPark events of a JFR recording, per blocker class, inside a
 * window of wall-clock time (parktrace's run): how many parks began in it,
 * and how much park time lies inside it (each park clipped to the window,
 * as parktrace charges a wait to a window). Also the same for the parks
 * that were already under way when the window began. Read with JFR's own
 * consumer API, as `jfr print --json` of a busy server's recording is
 * hundreds of megabytes. One line per class:
 *   class<TAB>parks<TAB>clipped_ns<TAB>parks_before<TAB>clipped_ns_before
 * usage: java JfrWindow.java RECORDING WINDOW_START_EPOCH_NS WINDOW_END_EPOCH_NS
 */
public class JfrWindow {
    static long ns(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    public static void main(String[] args) throws Exception {
        long w0 = Long.parseLong(args[1]), w1 = Long.parseLong(args[2]);
        Map<String, long[]> by = new TreeMap<>();
        try (RecordingFile f = new RecordingFile(Path.of(args[0]))) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                if (!e.getEventType().getName().equals("jdk.ThreadPark"))
                    continue;
                long s = ns(e.getStartTime()), t = ns(e.getEndTime());
                long clipped = Math.min(t, w1) - Math.max(s, w0);
                if (clipped < 0 || s > w1)
                    continue;
                RecordedClass c = e.getValue("parkedClass");
                String name = c == null ? "<no blocker>" : c.getName();
                long[] v = by.computeIfAbsent(name, k -> new long[4]);
                int at = s >= w0 ? 0 : 2;
                v[at] += 1;
                v[at + 1] += clipped;
            }
        }
        for (Map.Entry<String, long[]> c : by.entrySet()) {
            long[] v = c.getValue();
            System.out.println(c.getKey() + "\t" + v[0] + "\t" + v[1] + "\t" + v[2] + "\t" + v[3]);
        }
    }
}
