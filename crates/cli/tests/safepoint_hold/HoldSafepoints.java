// Holds safepoints up: spin() is compiled by C2 first, then a thread runs it on ~400
// million iterations at a time (about half a second) while main asks for a full GC every
// 100 ms for the given seconds (0: one GC). Run with -XX:-UseCountedLoopSafepoints
// -XX:LoopStripMiningIter=0 so that the int loop has no safepoint poll.
public class HoldSafepoints {
    static volatile int sink;

    static int spin(int n) {
        int acc = 0;
        for (int i = 0; i < n; i++) { acc = acc * 31 + i; acc ^= acc >>> 7; }
        return acc;
    }

    public static void main(String[] a) throws Exception {
        long end = System.nanoTime() + Long.parseLong(a[0]) * 1_000_000_000L;
        for (int i = 0; i < 20000; i++) sink = spin(1000);
        Thread t = new Thread(() -> { for (;;) sink = spin(400_000_000); }, "busy-loop-worker");
        t.setDaemon(true);
        t.start();
        Thread.sleep(100);
        do { System.gc(); Thread.sleep(100); } while (System.nanoTime() < end);
    }
}
