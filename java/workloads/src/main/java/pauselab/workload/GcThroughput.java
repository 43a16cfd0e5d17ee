package pauselab.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Replaces random members of a live set of byte arrays as fast as it can and reports
 * thousands of allocations per second per interval: the collector has to trace and move a
 * live set of the given size, so memory pressure (swap, THP compaction, NUMA, cgroup limits)
 * shows up directly as lost throughput. With {@code --idle}, the live set sits untouched for
 * that long before the replacing starts (and before throughput is measured): the phase in
 * which an idle service's heap is swapped out, so that the first collections afterwards
 * touch swapped pages.
 */
public final class GcThroughput {
    /** Per-thread counters sit 16 longs (128 bytes) apart so threads do not share a cache line. */
    private static final int STRIDE = 16;
    private static volatile boolean stopping;

    private GcThroughput() {
    }

    public static void main(String[] args) throws InterruptedException {
        Options options = new Options("GcThroughput",
                "Replaces random members of a live set as fast as it can; reports K allocations/s.")
                .size("live", "256m", "live set kept reachable")
                .size("size", "1k", "bytes per allocated array")
                .number("threads", "1", "allocating threads")
                .duration("duration", "30s", "how long to run; 0 runs until stopped")
                .duration("interval", "1s", "length of one interval")
                .duration("idle", "0s", "time the live set sits untouched before the replacing starts")
                .parse(args);
        long live = options.size("live");
        long size = options.size("size");
        long threads = options.integer("threads");
        if (size < 1 || size > (1 << 30)) {
            options.fail("--size must be between 1 and 1g, got " + size);
        }
        if (threads < 1 || threads > 1024) {
            options.fail("--threads must be between 1 and 1024, got " + threads);
        }
        long slotCount = Math.max(1, live / size);
        if (slotCount > Integer.MAX_VALUE - 8) {
            options.fail("--live / --size is too many objects: " + slotCount);
        }
        long intervalNs = Math.max(1_000_000, options.durationNs("interval"));
        boolean printIntervals = options.flag("print-intervals");

        Lifecycle run = new Lifecycle("GcThroughput", options.durationNs("duration"));
        long fillStart = System.nanoTime();
        byte[][] slots = new byte[(int) slotCount][];
        for (int i = 0; i < slots.length && run.running(); i++) {
            slots[i] = new byte[(int) size];
        }
        double fillS = (System.nanoTime() - fillStart) / 1e9;
        long idleEnd = System.nanoTime() + options.durationNs("idle");
        while (run.running() && System.nanoTime() < idleEnd) {
            Thread.sleep(Math.max(1, Math.min((idleEnd - System.nanoTime()) / 1_000_000, 100)));
        }

        long[] gcAtStart = Lifecycle.gcTotals();
        AtomicLongArray counts = new AtomicLongArray((int) threads * STRIDE);
        double[] stats = {0, Double.MAX_VALUE, 0, 0}; // total, min, max K/s, intervals
        long measureStart = System.nanoTime();
        run.summary(stopped -> {
            long[] gc = Lifecycle.gcTotals();
            double seconds = (System.nanoTime() - measureStart) / 1e9;
            long total = sum(counts, (int) threads);
            return run.line("summary").put("stopped", stopped).put("elapsed_s", run.elapsedSeconds())
                    .put("live_bytes", slotCount * size).put("size_bytes", size).put("threads", threads)
                    .put("fill_s", fillS).put("measured_s", seconds).put("allocations", total)
                    .put("kallocs_per_s", total / seconds / 1000)
                    .put("min_interval_kallocs_per_s", stats[3] > 0 ? stats[1] : Double.NaN)
                    .put("max_interval_kallocs_per_s", stats[3] > 0 ? stats[2] : Double.NaN)
                    .put("intervals", (long) stats[3])
                    .put("gc_count", gc[0] - gcAtStart[0]).put("gc_time_ms", gc[1] - gcAtStart[1]);
        });

        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int index = t * STRIDE;
            long seed = 0x9E3779B97F4A7C15L * (t + 1);
            Thread worker = new Thread(() -> churn(slots, (int) size, counts, index, seed),
                    "GcThroughput-" + t);
            worker.setDaemon(true);
            workers.add(worker);
        }
        workers.forEach(Thread::start);

        long intervalStart = measureStart;
        long countAtIntervalStart = 0;
        while (run.running()) {
            long wait = intervalStart + intervalNs - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(Math.max(1, Math.min(wait / 1_000_000, 100)));
                continue;
            }
            long now = System.nanoTime();
            long count = sum(counts, (int) threads);
            double kPerS = (count - countAtIntervalStart) / ((now - intervalStart) / 1e9) / 1000;
            stats[0] += kPerS;
            stats[1] = Math.min(stats[1], kPerS);
            stats[2] = Math.max(stats[2], kPerS);
            stats[3]++;
            if (printIntervals) {
                run.interval(run.line("interval").put("t_s", (now - measureStart) / 1e9)
                        .put("kallocs_per_s", kPerS));
            }
            intervalStart = now;
            countAtIntervalStart = count;
        }
        stopping = true;
        for (Thread worker : workers) {
            worker.join(5_000);
        }
        run.finish(false);
    }

    private static void churn(byte[][] slots, int size, AtomicLongArray counts, int index, long seed) {
        long random = seed;
        long done = 0;
        while (!stopping) {
            for (int i = 0; i < 1024; i++) {
                random ^= random << 13;
                random ^= random >>> 7;
                random ^= random << 17;
                slots[(int) ((random >>> 1) % slots.length)] = new byte[size];
            }
            done += 1024;
            counts.lazySet(index, done);
        }
    }

    private static long sum(AtomicLongArray counts, int threads) {
        long total = 0;
        for (int t = 0; t < threads; t++) {
            total += counts.get(t * STRIDE);
        }
        return total;
    }
}
