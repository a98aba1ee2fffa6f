import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Who let a contended monitor go to whom, as a JFR recording saw it: its
 * jdk.JavaMonitorEnter events (the thread that waited, the monitor's
 * previousOwner, the monitor's class) that began inside a window of
 * wall-clock time. One line per (class, thread, previous owner):
 *   class<TAB>thread<TAB>previous_owner<TAB>count<TAB>ns
 * Threads by their Java names; "-" where JFR has none.
 * usage: java JfrMonitorOwners.java RECORDING WINDOW_START_EPOCH_NS WINDOW_END_EPOCH_NS
 */
public class JfrMonitorOwners {
    static long ns(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    static String name(RecordedThread t) {
        return t == null || t.getJavaName() == null ? "-" : t.getJavaName();
    }

    public static void main(String[] args) throws Exception {
        long w0 = Long.parseLong(args[1]), w1 = Long.parseLong(args[2]);
        Map<String, long[]> by = new TreeMap<>();
        try (RecordingFile f = new RecordingFile(Path.of(args[0]))) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                if (!e.getEventType().getName().equals("jdk.JavaMonitorEnter"))
                    continue;
                long s = ns(e.getStartTime()), t = ns(e.getEndTime());
                if (s < w0 || s > w1)
                    continue;
                RecordedClass c = e.getValue("monitorClass");
                String key = (c == null ? "-" : c.getName()) + "\t" + name(e.getThread()) + "\t"
                             + name(e.getValue("previousOwner"));
                long[] v = by.computeIfAbsent(key, k -> new long[2]);
                v[0] += 1;
                v[1] += t - s;
            }
        }
        for (Map.Entry<String, long[]> c : by.entrySet())
            System.out.println(c.getKey() + "\t" + c.getValue()[0] + "\t" + c.getValue()[1]);
    }
}
