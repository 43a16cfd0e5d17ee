// Allocates for the given milliseconds (some objects kept, an occasional System.gc()) so
// that a recording and a GC log of a few seconds hold young, full and concurrent pauses.
// An optional second argument caps the objects kept (20000 by default, up to 100 MB):
// a small heap needs a small cap, or how long the run lasts decides whether it runs out.
import java.util.*;
public class Alloc {
    public static void main(String[] a) throws Exception {
        long end = System.nanoTime() + Long.parseLong(a[0]) * 1_000_000L;
        List<byte[]> keep = new ArrayList<>();
        Random r = new Random(1);
        int cap = a.length > 1 ? Integer.parseInt(a[1]) : 20000;
        long n = 0;
        while (System.nanoTime() < end) {
            byte[] b = new byte[1024 + r.nextInt(8192)];
            if (r.nextInt(50) == 0) { keep.add(b); if (keep.size() > cap) keep.subList(0, cap / 2).clear(); }
            n += b.length;
            if ((n & 0xffff) == 0) System.gc();
        }
        System.out.println(n + " " + keep.size());
    }
}
