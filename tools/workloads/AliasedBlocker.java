import java.lang.reflect.Field;
import java.util.concurrent.locks.LockSupport;

/** Two blockers of different classes, one after the other at the same
 *  address, as a moving collector makes them: each round allocates a First
 *  right after a full collection, parks on it and waits on it, drops it,
 *  collects again and does the same with a Second. Run with
 *  -XX:+UseSerialGC: its full collection empties eden, so the next object
 *  the thread allocates lands where the last round's did. Rounds go on until
 *  ALIASED of them put both objects at one address (at most 40). Every park
 *  is a timed one of 1 ms, every wait a 1 ms Object.wait; the last line
 *  gives, per class, the parks and waits made and how many rounds aliased.
 *  DELAY_MS holds the work back, so that a tracer that recognises JVMs
 *  after a while sees every park.
 *  usage: java -XX:+UseSerialGC AliasedBlocker [PER_ROUND] [ALIASED] [DELAY_MS] */
public class AliasedBlocker {
    static final class First { long a, b; }
    static final class Second { long a, b; }

    static final Object[] holder = new Object[1];
    static sun.misc.Unsafe unsafe;

    /** holder[0]'s address as the heap stores it: equal words, one address. */
    static long addressWord() {
        long base = unsafe.arrayBaseOffset(Object[].class);
        return unsafe.arrayIndexScale(Object[].class) == 4 ? unsafe.getInt(holder, base) & 0xffffffffL
                                                            : unsafe.getLong(holder, base);
    }

    /** Parks and waits PER times on holder[0]. */
    static void block(int per) throws InterruptedException {
        Object o = holder[0];
        for (int i = 0; i < per; i++) {
            LockSupport.parkNanos(o, 1_000_000);
            synchronized (o) {
                o.wait(1);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int per = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int wantAliased = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        long delay = args.length > 2 ? Long.parseLong(args[2]) : 0;
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        unsafe = (sun.misc.Unsafe) f.get(null);
        long[] blocks = new long[2];
        int[] rounds = new int[2];
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(delay);
                for (int r = 0; r < 40 && rounds[1] < wantAliased; r++) {
                    System.gc();
                    holder[0] = new First();
                    long first = addressWord();
                    block(per);
                    holder[0] = null;
                    System.gc();
                    holder[0] = new Second();
                    long second = addressWord();
                    block(per);
                    holder[0] = null;
                    blocks[0] += per;
                    blocks[1] += per;
                    rounds[0]++;
                    if (first == second)
                        rounds[1]++;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "aliased");
        t.start();
        t.join();
        System.out.println("{\"rounds\":" + rounds[0] + ",\"aliased\":" + rounds[1] + ",\"first\":" + blocks[0]
                           + ",\"second\":" + blocks[1] + "}");
    }
}
