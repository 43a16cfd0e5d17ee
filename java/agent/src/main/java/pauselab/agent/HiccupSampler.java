package pauselab.agent;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * The jHiccup method: sleep for the resolution, and record how much longer than the shortest
 * sleep seen so far the wake-up took. Any stall of the JVM or the platform (safepoint, page
 * fault, descheduling, SIGSTOP) delays this thread as it delays every other one.
 *
 * The loop allocates nothing: neither parking nor recording into a recorder allocates.
 */
final class HiccupSampler implements Runnable {
    private static final int WARMUP_RECORDS = 200_000;
    private final SingleWriterRecorder recorder;
    private final long resolutionNs;
    private final long highestNs;
    private final CountDownLatch ready = new CountDownLatch(1);
    private volatile boolean stopped;
    private long samples;

    HiccupSampler(SingleWriterRecorder recorder, long resolutionNs, long highestNs) {
        this.recorder = recorder;
        this.resolutionNs = resolutionNs;
        this.highestNs = highestNs;
    }

    @Override
    public void run() {
        warmUp();
        // Intervals start now, when sampling does, not when the recorder was made.
        recorder.reset();
        ready.countDown();
        long shortestNs = Long.MAX_VALUE;
        while (!stopped) {
            long start = System.nanoTime();
            long deltaNs;
            // Park until the full resolution has passed: park may return early, and an early
            // wake-up would lower the shortest delta and inflate every later hiccup. Unlike
            // Thread.sleep on newer JDKs, parking allocates nothing.
            do {
                LockSupport.parkNanos(resolutionNs - (System.nanoTime() - start));
                deltaNs = System.nanoTime() - start;
            } while (deltaNs < resolutionNs);
            if (deltaNs < shortestNs) {
                shortestNs = deltaNs;
            }
            long hiccupNs = Math.min(deltaNs - shortestNs, highestNs);
            recorder.recordValueWithExpectedInterval(hiccupNs, resolutionNs);
            samples++;
        }
    }

    /**
     * Runs the recording path on a scratch recorder until the JIT has compiled it: the
     * compilations and deoptimisations on the way resolve classes and constants lazily, which
     * allocates, and that should happen here rather than an unknown time into the run.
     */
    private void warmUp() {
        SingleWriterRecorder scratch = new SingleWriterRecorder(
                IntervalLogger.LOWEST_NS, highestNs, IntervalLogger.SIGNIFICANT_DIGITS);
        Histogram interval = null;
        for (int i = 0; i < WARMUP_RECORDS; i++) {
            long valueNs = Math.min((i % 1000) * 1000L, highestNs);
            scratch.recordValueWithExpectedInterval(valueNs, resolutionNs);
            if (i % 10_000 == 0) {
                interval = scratch.getIntervalHistogram(interval);
            }
        }
    }

    /** Waits until the warm-up is done and sampling has begun. */
    void awaitSampling() throws InterruptedException {
        ready.await(30, TimeUnit.SECONDS);
    }

    void stop() {
        stopped = true;
    }

    /** Wake-ups recorded so far; exact once the thread has ended. */
    long samples() {
        return samples;
    }
}
