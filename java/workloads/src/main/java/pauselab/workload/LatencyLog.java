package pauselab.workload;

import java.io.FileNotFoundException;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.HdrHistogram.Recorder;

/**
 * Takes the recorder's histogram once per interval: writes it to an HdrHistogram interval log
 * (when a file is given) and flushes, so that a reader following the log, or a crash, loses
 * at most one interval; adds it to the run's total; and hands it to a listener (the
 * --print-intervals lines). {@link #finish()} takes the last, partial interval.
 */
final class LatencyLog {
    private final long intervalNs;
    private final PrintStream out;
    private final HistogramLogWriter writer;
    private Recorder recorder;
    private Consumer<Histogram> listener;
    private final Histogram total = new Histogram(RequestSchedule.LOWEST_NS, RequestSchedule.HIGHEST_NS,
            RequestSchedule.SIGNIFICANT_DIGITS);
    private final Thread thread;
    private Histogram interval;
    private boolean finished;

    /** Opens the log; {@code path} empty: no file, the totals and the listener only. */
    LatencyLog(String path, long intervalNs) throws FileNotFoundException {
        this.intervalNs = intervalNs;
        this.out = path.isEmpty() ? null : new PrintStream(new FileOutputStream(path), false);
        this.writer = out == null ? null : new HistogramLogWriter(out);
        this.thread = new Thread(this::run, "pauselab-latency-log");
        this.thread.setDaemon(true);
    }

    /**
     * Writes the header and starts taking the recorder's intervals, the first from now,
     * handing each to {@code listener}.
     */
    synchronized void start(Recorder recorder, String comment, Consumer<Histogram> listener) {
        this.recorder = recorder;
        this.listener = listener;
        long startMs = System.currentTimeMillis();
        recorder.reset();
        if (writer != null) {
            writer.outputLogFormatVersion();
            writer.outputComment(comment);
            writer.outputStartTime(startMs);
            writer.setBaseTime(startMs);
            writer.outputBaseTime(startMs);
            writer.outputLegend();
            out.flush();
        }
        thread.start();
    }

    private void run() {
        long next = System.nanoTime() + intervalNs;
        while (true) {
            long wait;
            while ((wait = next - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
            }
            synchronized (this) {
                if (finished) {
                    return;
                }
                takeInterval();
            }
            next += intervalNs;
            long now = System.nanoTime();
            if (now - next > intervalNs) {
                // Stalled for more than an interval: one long interval, not a burst of empty ones.
                next = now + intervalNs;
            }
        }
    }

    private void takeInterval() {
        interval = recorder.getIntervalHistogram(interval);
        total.add(interval);
        if (writer != null) {
            writer.outputIntervalHistogram(interval);
            out.flush();
        }
        listener.accept(interval);
    }

    /** Takes the last interval and closes the log; false when writing the file failed. */
    synchronized boolean finish() {
        if (finished) {
            return true;
        }
        finished = true;
        if (recorder != null) {
            takeInterval();
        }
        if (out == null) {
            return true;
        }
        out.close();
        return !out.checkError();
    }

    /** The latency of every request so far, in ns. */
    synchronized Histogram total() {
        return total.copy();
    }

    static String comment(String workload, double ratePerS) {
        return String.format(Locale.ROOT,
                "[pauselab %s: request latency in ns from each request's scheduled start, %.3f requests/s, pid %d]",
                workload, ratePerS, ProcessHandle.current().pid());
    }
}
