package pauselab.workload;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Run, stop and report, the same way for every workload: the work loop asks {@link #running()},
 * SIGTERM or Ctrl-C makes it false, and the summary line is printed exactly once, by the loop
 * when it ends or by the shutdown hook if the loop does not end in time.
 */
final class Lifecycle {
    private static final long HOOK_WAIT_MS = 10_000;

    private final String workload;
    private final long startNs = System.nanoTime();
    private final long deadlineNs;
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile boolean signalled;
    private boolean summaryPrinted;
    private Function<String, Json> summary;

    /** durationNs 0 means: until stopped. */
    Lifecycle(String workload, long durationNs) {
        this.workload = workload;
        this.deadlineNs = durationNs == 0 ? Long.MAX_VALUE : startNs + durationNs;
        Runtime.getRuntime().addShutdownHook(new Thread(this::onShutdown, workload + "-shutdown"));
    }

    /** The summary to print at the end; given how the run stopped ("duration", "signal", "done"). */
    void summary(Function<String, Json> summary) {
        this.summary = summary;
    }

    boolean running() {
        return !signalled && (deadlineNs == Long.MAX_VALUE || System.nanoTime() - deadlineNs < 0);
    }

    boolean signalled() {
        return signalled;
    }

    double elapsedSeconds() {
        return (System.nanoTime() - startNs) / 1e9;
    }

    /** Prints an interval line, when asked for with --print-intervals. */
    synchronized void interval(Json line) {
        if (!summaryPrinted) {
            System.out.println(line);
            System.out.flush();
        }
    }

    /** Called by the work loop when it ends, whatever the reason. */
    void finish(boolean done) {
        printSummary(signalled ? "signal" : done ? "done" : "duration");
        finished.countDown();
    }

    private void onShutdown() {
        signalled = finished.getCount() > 0;
        if (!signalled) {
            return;
        }
        try {
            finished.await(HOOK_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        printSummary("signal");
    }

    private synchronized void printSummary(String stopped) {
        if (summaryPrinted) {
            return;
        }
        summaryPrinted = true;
        Json line = summary == null ? new Json() : summary.apply(stopped);
        System.out.println(line);
        System.out.flush();
    }

    /** A fresh line with the fields every workload line starts with. */
    Json line(String type) {
        return new Json().put("type", type).put("workload", workload);
    }

    /** Collector count and time so far, summed over all collectors. */
    static long[] gcTotals() {
        long count = 0;
        long timeMs = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            timeMs += Math.max(0, gc.getCollectionTime());
        }
        return new long[] {count, timeMs};
    }
}
