package pauselab.agent;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * Owns the recording: after the start delay it starts the sampling thread, then writes one
 * histogram per interval to the log and flushes it, so a reader (or a crash) never waits for
 * more than one interval. {@link #finish()} writes the last, partial interval at JVM exit.
 */
final class IntervalLogger implements Runnable {
    static final long LOWEST_NS = TimeUnit.MICROSECONDS.toNanos(20);
    static final long HIGHEST_NS = TimeUnit.HOURS.toNanos(1);
    static final int SIGNIFICANT_DIGITS = 2;
    /** Intervals written before the agent's own cost counts as steady state. */
    static final int WARMUP_INTERVALS = 2;
    private static final int ENCODER_WARMUP_LINES = 2_000;

    private final PrintStream out;
    private final HistogramLogWriter writer;
    private final IntervalLineEncoder encoder;
    private final AgentOptions options;
    private final long baseTimeMs;
    private final AgentCost cost;
    private SingleWriterRecorder recorder;
    private HiccupSampler sampler;
    private Thread samplerThread;
    private Histogram interval;
    private boolean closed;

    IntervalLogger(PrintStream out, AgentOptions options, long baseTimeMs, AgentCost cost) {
        this.out = out;
        this.writer = new HistogramLogWriter(out);
        this.encoder = new IntervalLineEncoder(options.tag);
        this.options = options;
        this.baseTimeMs = baseTimeMs;
        this.cost = cost;
    }

    @Override
    public void run() {
        if (options.delayNs > 0 && !sleepUntil(System.nanoTime() + options.delayNs)) {
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            try {
                startRecording();
            } catch (InterruptedException e) {
                return;
            }
        }
        long next = System.nanoTime() + options.intervalNs;
        int written = 0;
        while (sleepUntil(next)) {
            synchronized (this) {
                if (closed) {
                    return;
                }
                writeInterval();
            }
            written++;
            if (cost != null && written == WARMUP_INTERVALS) {
                cost.markSteadyState();
            }
            next += options.intervalNs;
            long now = System.nanoTime();
            if (now - next > options.intervalNs) {
                // This thread was stalled for more than an interval: restart the schedule
                // instead of writing a burst of empty intervals.
                next = now + options.intervalNs;
            }
        }
    }

    private void startRecording() throws InterruptedException {
        warmUpEncoder();
        recorder = new SingleWriterRecorder(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS);
        sampler = new HiccupSampler(recorder, options.resolutionNs, HIGHEST_NS);
        samplerThread = new Thread(sampler, "pauselab-hiccup-sampler");
        samplerThread.setDaemon(true);
        samplerThread.setPriority(Thread.MAX_PRIORITY);
        samplerThread.start();
        if (cost != null) {
            cost.samplerStarted(samplerThread);
        }
        sampler.awaitSampling();
        long startMs = System.currentTimeMillis();
        writer.outputLogFormatVersion();
        writer.outputComment(String.format(Locale.ROOT,
                "[Logged with the pauselab hiccup agent: pid %d, resolution %.3f ms, interval %.3f s]",
                ProcessHandle.current().pid(), options.resolutionNs / 1e6, options.intervalNs / 1e9));
        writer.outputStartTime(startMs);
        writer.setBaseTime(baseTimeMs);
        writer.outputBaseTime(baseTimeMs);
        writer.outputLegend();
        out.flush();
    }

    private void writeInterval() {
        interval = recorder.getIntervalHistogram(interval);
        encoder.encode(interval, baseTimeMs);
        out.write(encoder.bytes(), 0, encoder.length());
        out.flush();
    }

    /**
     * Encodes a scratch histogram until the JIT has compiled the path: compilation and
     * deoptimisation resolve classes and constants lazily, which allocates, and that should
     * happen now rather than at some later interval.
     */
    private void warmUpEncoder() {
        Histogram scratch = new Histogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS);
        for (int i = 0; i < ENCODER_WARMUP_LINES; i++) {
            scratch.recordValue(LOWEST_NS * (1 + i % 97));
            scratch.setStartTimeStamp(baseTimeMs + i);
            scratch.setEndTimeStamp(baseTimeMs + i + 1);
            encoder.encode(scratch, baseTimeMs);
        }
    }

    /** Writes the last interval and closes the log; called once, from the shutdown hook. */
    synchronized void finish() {
        if (closed) {
            return;
        }
        closed = true;
        if (recorder != null) {
            if (cost != null) {
                cost.markEnd();
            }
            sampler.stop();
            awaitLastSample();
            writeInterval();
        }
        out.close();
        if (out.checkError()) {
            System.err.println("pauselab-agent: error: writing the hiccup log failed (disk full?)");
        }
        if (cost != null) {
            System.err.println(cost.toJson(sampler == null ? 0 : sampler.samples()));
        }
    }

    /**
     * Lets the sampler record the wake-up it is in. A JVM frozen just before it exits (SIGSTOP,
     * a stall on a dirty page) wakes the sampler and the exiting thread at the same moment;
     * without this wait the hook could write the last interval before the freeze is recorded.
     * The sampler parks for at most one resolution, so the wait is bounded by that.
     */
    private void awaitLastSample() {
        long boundMs = TimeUnit.NANOSECONDS.toMillis(options.resolutionNs) + 200;
        try {
            samplerThread.join(boundMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Sleeps until the nanoTime deadline; false if interrupted. */
    private static boolean sleepUntil(long deadline) {
        long remaining;
        while ((remaining = deadline - System.nanoTime()) > 0) {
            LockSupport.parkNanos(remaining);
            if (Thread.interrupted()) {
                return false;
            }
        }
        return true;
    }
}
