package pauselab.workload;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * How long a JVM takes to reach main and then to touch its heap: run it with a given
 * -Xms/-Xmx, with and without -XX:+AlwaysPreTouch, to see where the page faults are paid.
 *
 * <p>The first line, {@code "type":"ready"}, carries the JVM's uptime at main: the JVM
 * counts it from before the heap is reserved, so it includes pre-touching, unlike the
 * RuntimeMXBean start time, which is taken after the heap is set up. With {@code --measure}
 * the workload then allocates for that long after main (first the live set, then replacing
 * members of it) and reports the allocation throughput of that first window.
 */
public final class StartupHeap {
    private StartupHeap() {
    }

    public static void main(String[] args) {
        long mainAtMs = System.currentTimeMillis();
        long mainAtNs = System.nanoTime();
        long uptimeAtMainMs = ManagementFactory.getRuntimeMXBean().getUptime();
        Options options = new Options("StartupHeap",
                "Reports the time from JVM start to main, then fills the heap with reachable arrays.")
                .size("touch", "0", "bytes to fill; 0 fills half of the maximum heap")
                .size("chunk", "256k", "bytes per array")
                .number("launched-at-ms", "0",
                        "when the caller started the JVM, in ms since the epoch (adds launch_to_main_ms)")
                .duration("duration", "0", "stop filling after this long; 0 fills it all")
                .duration("measure", "0", "allocate for this long after main (fill, then replace"
                        + " members of the live set) and report the throughput; 0 only fills")
                .duration("hold", "0", "keep the filled heap reachable this long before exiting"
                        + " (SIGTERM ends it early), e.g. to look at the process's memory")
                .parse(args);
        long maxHeap = Runtime.getRuntime().maxMemory();
        long touch = options.size("touch") == 0 ? maxHeap / 2 : options.size("touch");
        long chunk = options.size("chunk");
        long launchedAtMs = options.integer("launched-at-ms");
        long measureNs = options.durationNs("measure");
        if (chunk < 1 || chunk > (1 << 30)) {
            options.fail("--chunk must be between 1 and 1g, got " + chunk);
        }
        if (measureNs > 0 && touch / chunk < 1) {
            options.fail("--measure needs --touch of at least one --chunk");
        }
        long jvmStartMs = ManagementFactory.getRuntimeMXBean().getStartTime();
        long processStartMs = ProcessHandle.current().info().startInstant()
                .map(instant -> instant.toEpochMilli()).orElse(-1L);
        long committedAtMain = Runtime.getRuntime().totalMemory();
        Json ready = new Json().put("type", "ready").put("workload", "StartupHeap")
                .put("uptime_at_main_ms", uptimeAtMainMs);
        if (launchedAtMs > 0) {
            ready.put("launch_to_main_ms", mainAtMs - launchedAtMs);
        }
        System.out.println(ready);
        System.out.flush();

        // With --measure the window is the whole run; --duration only bounds the fill.
        Lifecycle run = new Lifecycle("StartupHeap", measureNs > 0 ? measureNs : options.durationNs("duration"));
        long[] gcAtStart = Lifecycle.gcTotals();
        long[] touched = {0, 0}; // bytes, ns
        long[] allocated = {0}; // bytes, fill included
        double[] minInterval = {Double.NaN};
        run.summary(stopped -> {
            long[] gc = Lifecycle.gcTotals();
            double touchS = touched[1] / 1e9;
            Json line = run.line("summary").put("stopped", stopped)
                    .put("uptime_at_main_ms", uptimeAtMainMs)
                    .put("jvm_start_to_main_ms", mainAtMs - jvmStartMs)
                    .put("process_start_to_main_ms", processStartMs < 0 ? -1 : mainAtMs - processStartMs);
            if (launchedAtMs > 0) {
                line.put("launch_to_main_ms", mainAtMs - launchedAtMs);
            }
            line.put("max_heap_bytes", maxHeap).put("committed_at_main_bytes", committedAtMain)
                    .put("committed_after_touch_bytes", Runtime.getRuntime().totalMemory())
                    .put("touched_bytes", touched[0]).put("touch_s", touchS)
                    .put("touch_mib_per_s", touchS > 0 ? touched[0] / 1048576.0 / touchS : Double.NaN);
            if (measureNs > 0) {
                double measuredS = (System.nanoTime() - mainAtNs) / 1e9;
                line.put("measured_s", measuredS).put("allocated_bytes", allocated[0])
                        .put("alloc_mib_per_s", allocated[0] / 1048576.0 / measuredS)
                        // Counted from JVM start: the time before main did no work.
                        .put("alloc_mib_per_s_from_start",
                                allocated[0] / 1048576.0 / (measuredS + uptimeAtMainMs / 1000.0))
                        .put("min_interval_mib_per_s", minInterval[0]);
            }
            return line.put("gc_count", gc[0] - gcAtStart[0]).put("gc_time_ms", gc[1] - gcAtStart[1]);
        });

        List<byte[]> kept = new ArrayList<>();
        long start = System.nanoTime();
        try {
            while (touched[0] + chunk <= touch && run.running()) {
                kept.add(new byte[(int) chunk]);
                touched[0] += chunk;
            }
            touched[1] = System.nanoTime() - start;
            allocated[0] = touched[0];
            if (measureNs > 0) {
                minInterval[0] = replace(kept, (int) chunk, run, allocated, mainAtNs);
            }
        } catch (OutOfMemoryError e) {
            kept.clear();
            System.err.println("StartupHeap: error: the heap is full after " + touched[0]
                    + " bytes; ask for less with --touch");
            System.exit(1);
        }
        long holdNs = options.durationNs("hold");
        long holdStart = System.nanoTime();
        while (run.running() && System.nanoTime() - holdStart < holdNs) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                break;
            }
        }
        kept.clear();
        run.finish(measureNs == 0 && touched[0] + chunk > touch);
    }

    /**
     * Replaces random members of the live set until the window ends; returns the lowest
     * throughput of a whole one-second interval counted from main (NaN if none completed).
     */
    private static double replace(List<byte[]> kept, int chunk, Lifecycle run, long[] allocated, long mainAtNs) {
        long random = 0x9E3779B97F4A7C15L;
        double minMibPerS = Double.NaN;
        long second = (System.nanoTime() - mainAtNs) / 1_000_000_000L;
        long allocatedAtSecond = allocated[0];
        boolean whole = false; // the interval under way when the fill ended is partial
        while (run.running()) {
            for (int i = 0; i < 64; i++) {
                random ^= random << 13;
                random ^= random >>> 7;
                random ^= random << 17;
                kept.set((int) ((random >>> 1) % kept.size()), new byte[chunk]);
            }
            allocated[0] += 64L * chunk;
            long now = (System.nanoTime() - mainAtNs) / 1_000_000_000L;
            if (now != second) {
                if (whole && now == second + 1) {
                    double mibPerS = (allocated[0] - allocatedAtSecond) / 1048576.0;
                    minMibPerS = Double.isNaN(minMibPerS) ? mibPerS : Math.min(minMibPerS, mibPerS);
                }
                whole = true;
                second = now;
                allocatedAtSecond = allocated[0];
            }
        }
        return minMibPerS;
    }
}
