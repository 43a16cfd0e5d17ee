package pauselab.workload;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import org.HdrHistogram.Recorder;

/**
 * The arrival schedule of an open-loop load, and each request's latency measured against it.
 *
 * <p>Request {@code n} is due at {@code start + n / rate}, whatever happened to the requests
 * before it. Workers take request numbers in order, wait until the request is due (never
 * starting one early), run it, and record its latency from the time it was due, not from the
 * time a worker got to it. When the JVM is stopped (a safepoint, a CPU quota, SIGSTOP) the
 * requests that fall due meanwhile queue up, and each of them carries the time it waited:
 * the stall shows in every request it delayed, not only in the one it interrupted. Timing
 * from the start of the work instead would hide the stall behind the loop's own slowness
 * (coordinated omission).
 */
final class RequestSchedule {
    /** Latencies from 1 us to an hour, two significant digits (the lab's histogram bounds). */
    static final long LOWEST_NS = TimeUnit.MICROSECONDS.toNanos(1);
    static final long HIGHEST_NS = TimeUnit.HOURS.toNanos(1);
    static final int SIGNIFICANT_DIGITS = 2;
    /** How long a worker waiting for a future request sleeps at most before it looks at the stop flag. */
    private static final long STOP_CHECK_NS = TimeUnit.MILLISECONDS.toNanos(50);

    private final long startNs;
    private final double periodNs;
    private final Recorder recorder;
    private final AtomicLong next = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final LongAccumulator maxQueued = new LongAccumulator(Math::max, 0);

    /** A recorder for the latencies of a schedule (their bounds and precision). */
    static Recorder newRecorder() {
        return new Recorder(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS);
    }

    /**
     * A schedule of {@code ratePerS} requests per second from {@code startNs}
     * (System.nanoTime), recording latencies into {@code recorder}.
     */
    RequestSchedule(double ratePerS, long startNs, Recorder recorder) {
        if (!(ratePerS > 0) || Double.isInfinite(ratePerS)) {
            throw new IllegalArgumentException("rate must be a positive number, got " + ratePerS);
        }
        this.startNs = startNs;
        this.periodNs = 1e9 / ratePerS;
        this.recorder = recorder;
    }

    long startNs() {
        return startNs;
    }

    /** When request {@code n} (from 0) is due. */
    long dueNs(long n) {
        return startNs + Math.round(n * periodNs);
    }

    /** How many requests are due at {@code nowNs} (request 0 is due at the start). */
    long dueBy(long nowNs) {
        if (nowNs < startNs) {
            return 0;
        }
        long count = (long) Math.floor((nowNs - startNs) / periodNs) + 1;
        // Rounding of dueNs and of the division may disagree by one at the boundary.
        while (count > 0 && dueNs(count - 1) > nowNs) {
            count--;
        }
        while (dueNs(count) <= nowNs) {
            count++;
        }
        return count;
    }

    /**
     * Serves requests until {@code running} says stop: takes the next request number, waits
     * until it is due, hands it to {@code request}, records its latency. Several workers may
     * serve the same schedule; they share the request numbers.
     */
    void serve(BooleanSupplier running, LongConsumer request) {
        while (running.getAsBoolean()) {
            long n = next.getAndIncrement();
            long dueNs = dueNs(n);
            long now;
            while ((now = System.nanoTime()) - dueNs < 0) {
                if (!running.getAsBoolean()) {
                    return;
                }
                LockSupport.parkNanos(Math.min(dueNs - now, STOP_CHECK_NS));
            }
            // Requests already due that no worker has started yet: the queue.
            maxQueued.accumulate(Math.max(0, dueBy(now) - next.get()));
            request.accept(n);
            recorder.recordValue(Math.min(System.nanoTime() - dueNs, HIGHEST_NS));
            completed.incrementAndGet();
        }
    }

    long completed() {
        return completed.get();
    }

    /** The longest queue a worker found when it started a request. */
    long maxQueued() {
        return maxQueued.get();
    }

    /** Requests due by {@code endNs} that were not completed. */
    long unfinished(long endNs) {
        return Math.max(0, dueBy(endNs) - completed.get());
    }

    /**
     * At {@code endNs}, how long the oldest unfinished request had waited; 0 when none was
     * waiting. Exact with one worker; with several (which may complete requests out of
     * order) a lower bound.
     */
    long oldestWaitingNs(long endNs) {
        long done = completed.get();
        return dueBy(endNs) > done ? Math.max(0, endNs - dueNs(done)) : 0;
    }
}
