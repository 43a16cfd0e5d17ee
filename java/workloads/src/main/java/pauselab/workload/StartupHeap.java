package pauselab.workload;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * How long a JVM takes to reach main and then to touch its heap: run it with a given
 * -Xms/-Xmx, with and without -XX:+AlwaysPreTouch, to see where the page faults are paid.
 */
public final class StartupHeap {
    private StartupHeap() {
    }

    public static void main(String[] args) {
        long mainAtMs = System.currentTimeMillis();
        Options options = new Options("StartupHeap",
                "Reports the time from JVM start to main, then fills the heap with reachable arrays.")
                .size("touch", "0", "bytes to fill; 0 fills half of the maximum heap")
                .size("chunk", "256k", "bytes per array")
                .number("launched-at-ms", "0",
                        "when the caller started the JVM, in ms since the epoch (adds launch_to_main_ms)")
                .duration("duration", "0", "stop filling after this long; 0 fills it all")
                .duration("hold", "0", "keep the filled heap reachable this long before exiting"
                        + " (SIGTERM ends it early), e.g. to look at the process's memory")
                .parse(args);
        long maxHeap = Runtime.getRuntime().maxMemory();
        long touch = options.size("touch") == 0 ? maxHeap / 2 : options.size("touch");
        long chunk = options.size("chunk");
        long launchedAtMs = options.integer("launched-at-ms");
        if (chunk < 1 || chunk > (1 << 30)) {
            options.fail("--chunk must be between 1 and 1g, got " + chunk);
        }
        long jvmStartMs = ManagementFactory.getRuntimeMXBean().getStartTime();
        long processStartMs = ProcessHandle.current().info().startInstant()
                .map(instant -> instant.toEpochMilli()).orElse(-1L);
        long committedAtMain = Runtime.getRuntime().totalMemory();

        Lifecycle run = new Lifecycle("StartupHeap", options.durationNs("duration"));
        long[] gcAtStart = Lifecycle.gcTotals();
        long[] touched = {0, 0}; // bytes, ns
        run.summary(stopped -> {
            long[] gc = Lifecycle.gcTotals();
            double touchS = touched[1] / 1e9;
            Json line = run.line("summary").put("stopped", stopped)
                    .put("jvm_start_to_main_ms", mainAtMs - jvmStartMs)
                    .put("process_start_to_main_ms", processStartMs < 0 ? -1 : mainAtMs - processStartMs);
            if (launchedAtMs > 0) {
                line.put("launch_to_main_ms", mainAtMs - launchedAtMs);
            }
            return line.put("max_heap_bytes", maxHeap).put("committed_at_main_bytes", committedAtMain)
                    .put("committed_after_touch_bytes", Runtime.getRuntime().totalMemory())
                    .put("touched_bytes", touched[0]).put("touch_s", touchS)
                    .put("touch_mib_per_s", touchS > 0 ? touched[0] / 1048576.0 / touchS : Double.NaN)
                    .put("gc_count", gc[0] - gcAtStart[0]).put("gc_time_ms", gc[1] - gcAtStart[1]);
        });

        List<byte[]> kept = new ArrayList<>();
        long start = System.nanoTime();
        try {
            while (touched[0] + chunk <= touch && run.running()) {
                kept.add(new byte[(int) chunk]);
                touched[0] += chunk;
            }
        } catch (OutOfMemoryError e) {
            kept.clear();
            touched[1] = System.nanoTime() - start;
            System.err.println("StartupHeap: error: the heap is full after " + touched[0]
                    + " bytes; ask for less with --touch");
            System.exit(1);
        }
        touched[1] = System.nanoTime() - start;
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
        run.finish(touched[0] + chunk > touch);
    }
}
