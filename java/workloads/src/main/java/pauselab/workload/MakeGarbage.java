package pauselab.workload;

import java.util.concurrent.locks.LockSupport;

/**
 * Allocates byte arrays of one size at a steady rate and keeps the last few live: a young
 * collection every few allocations, each one a chance for the JVM to stall on the OS
 * (the classic reproduction of the hsperf and GC-log write stalls).
 */
public final class MakeGarbage {
    /** Keeps dropped arrays from being optimised away when nothing is kept live. */
    static volatile Object sink;

    private MakeGarbage() {
    }

    public static void main(String[] args) {
        Options options = new Options("MakeGarbage",
                "Allocates byte arrays at a given rate, keeping the newest --live of them reachable.")
                .size("size", "4m", "bytes per array")
                .number("rate", "0", "arrays per second; 0 allocates as fast as it can")
                .number("live", "2", "how many of the newest arrays stay reachable")
                .duration("duration", "60s", "how long to run; 0 runs until stopped")
                .duration("interval", "1s", "length of one --print-intervals line")
                .parse(args);
        long size = options.size("size");
        double rate = options.real("rate");
        long live = options.integer("live");
        if (size > Integer.MAX_VALUE - 8) {
            options.fail("--size must be below 2g, got " + size);
        }
        if (live < 0 || live > 1_000_000) {
            options.fail("--live must be between 0 and 1000000, got " + live);
        }
        if (rate < 0) {
            options.fail("--rate must not be negative");
        }
        long intervalNs = Math.max(1_000_000, options.durationNs("interval"));
        boolean printIntervals = options.flag("print-intervals");

        Lifecycle run = new Lifecycle("MakeGarbage", options.durationNs("duration"));
        long[] gcAtStart = Lifecycle.gcTotals();
        byte[][] kept = new byte[(int) Math.max(1, live)][];
        long periodNs = rate > 0 ? Math.round(1e9 / rate) : 0;
        long[] totals = new long[2]; // arrays, longest gap between two allocations in ns
        run.summary(stopped -> {
            long[] gc = Lifecycle.gcTotals();
            double elapsed = run.elapsedSeconds();
            return run.line("summary").put("stopped", stopped).put("elapsed_s", elapsed)
                    .put("size_bytes", size).put("rate_per_s", rate).put("live", live)
                    .put("arrays", totals[0]).put("bytes", totals[0] * size)
                    .put("mib_per_s", totals[0] * size / 1048576.0 / elapsed)
                    .put("max_gap_ms", totals[1] / 1e6)
                    .put("gc_count", gc[0] - gcAtStart[0]).put("gc_time_ms", gc[1] - gcAtStart[1]);
        });

        long start = System.nanoTime();
        long next = start;
        long previous = start;
        long intervalStart = start;
        long intervalArrays = 0;
        long intervalMaxGap = 0;
        int slot = 0;
        while (run.running()) {
            if (periodNs > 0) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                    continue;
                }
                next += periodNs;
                if (System.nanoTime() - next > 1_000_000_000L) {
                    // Stalled for over a second: resume the schedule instead of a burst.
                    next = System.nanoTime() + periodNs;
                }
            }
            byte[] array = new byte[(int) size];
            if (live > 0) {
                kept[slot] = array;
                slot = slot + 1 == live ? 0 : slot + 1;
            } else {
                sink = array;
            }
            long now = System.nanoTime();
            long gap = now - previous;
            previous = now;
            totals[0]++;
            intervalArrays++;
            intervalMaxGap = Math.max(intervalMaxGap, gap);
            totals[1] = Math.max(totals[1], gap);
            if (now - intervalStart >= intervalNs) {
                if (printIntervals) {
                    double seconds = (now - intervalStart) / 1e9;
                    run.interval(run.line("interval").put("t_s", (now - start) / 1e9)
                            .put("arrays", intervalArrays)
                            .put("mib_per_s", intervalArrays * size / 1048576.0 / seconds)
                            .put("max_gap_ms", intervalMaxGap / 1e6));
                }
                intervalStart = now;
                intervalArrays = 0;
                intervalMaxGap = 0;
            }
        }
        sink = null;
        run.finish(false);
    }
}
