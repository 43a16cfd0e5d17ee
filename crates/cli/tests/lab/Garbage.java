// A small garbage maker for lab tests: allocates 4 MiB arrays, keeps 2 live, for N seconds.
public class Garbage {
    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 60;
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        byte[][] live = new byte[2][];
        long n = 0;
        while (System.nanoTime() < end) {
            live[(int) (n++ % live.length)] = new byte[4 << 20];
            Thread.sleep(5);
        }
        System.out.println("{\"arrays\":" + n + "}");
    }
}
