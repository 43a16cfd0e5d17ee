// Allocates for the given milliseconds (some objects kept, an occasional System.gc()) so
// that a recording and a GC log of a few seconds hold young, full and concurrent pauses.
import java.util.*;
public class Alloc {
    public static void main(String[] a) throws Exception {
        long end = System.nanoTime() + Long.parseLong(a[0]) * 1_000_000L;
        List<byte[]> keep = new ArrayList<>();
        Random r = new Random(1);
        long n = 0;
        while (System.nanoTime() < end) {
            byte[] b = new byte[1024 + r.nextInt(8192)];
            if (r.nextInt(50) == 0) { keep.add(b); if (keep.size() > 20000) keep.subList(0, 10000).clear(); }
            n += b.length;
            if ((n & 0xffff) == 0) System.gc();
        }
        System.out.println(n + " " + keep.size());
    }
}
