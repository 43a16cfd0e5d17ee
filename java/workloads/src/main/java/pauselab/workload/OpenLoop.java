package pauselab.workload;

import java.io.FileNotFoundException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A service under a fixed offered load: requests arrive on a schedule (--rate per second)
 * whether or not the service keeps up, queue while the JVM is stopped or throttled, and each
 * one's latency counts from when it was due (see {@link RequestSchedule}). A request
 * allocates an array of --size bytes, does --work bytes of hashing over it, and keeps it in
 * a ring of the newest --live arrays, so that collections have live data to copy. With
 * --cache N the service also holds N small objects for the whole run, as an in-memory cache
 * or session table does: every full collection must mark and move each of them, which
 * costs CPU per object, not per byte. The latencies go to an HdrHistogram interval log
 * (--latency-log) as the run goes.
 */
public final class OpenLoop {
    /** Keeps the requests' checksums from being optimised away. */
    static volatile long sink;

    private OpenLoop() {
    }

    public static void main(String[] args) throws InterruptedException {
        Options options = new Options("OpenLoop",
                "Serves requests arriving at a fixed rate; logs each one's latency from its scheduled start.")
                .number("rate", "200", "requests per second, offered whether or not the service keeps up")
                .size("size", "1m", "bytes allocated by each request (one array)")
                .size("work", "0", "bytes hashed by each request, over its array (CPU work)")
                .number("live", "16", "how many of the newest requests' arrays stay reachable")
                .number("cache", "0", "small objects (32 bytes each) held for the whole run, built before the first request")
                .number("threads", "1", "worker threads serving the requests in order")
                .duration("duration", "60s", "how long to run; 0 runs until stopped")
                .duration("interval", "1s", "length of one latency log interval and --print-intervals line")
                .path("latency-log", "HdrHistogram interval log of request latencies, in ns")
                .parse(args);
        double rate = options.real("rate");
        long size = options.size("size");
        long work = options.size("work");
        long live = options.integer("live");
        long threads = options.integer("threads");
        long cacheEntries = options.integer("cache");
        if (!(rate > 0) || rate > 1e7) {
            options.fail("--rate must be above 0 and at most 10000000, got " + options.text("rate"));
        }
        if (size < 1 || size > Integer.MAX_VALUE - 8) {
            options.fail("--size must be between 1 and 2g, got " + size);
        }
        if (live < 1 || live > 1_000_000) {
            options.fail("--live must be between 1 and 1000000, got " + live);
        }
        if (cacheEntries < 0 || cacheEntries > 100_000_000) {
            options.fail("--cache must be between 0 and 100000000, got " + cacheEntries);
        }
        if (threads < 1 || threads > 256) {
            options.fail("--threads must be between 1 and 256, got " + threads);
        }
        long intervalNs = Math.max(1_000_000, options.durationNs("interval"));
        boolean printIntervals = options.flag("print-intervals");

        LatencyLog log = null;
        try {
            log = new LatencyLog(options.text("latency-log"), intervalNs);
        } catch (FileNotFoundException e) {
            options.fail("--latency-log: cannot write " + options.text("latency-log") + ": " + e.getMessage());
        }
        LatencyLog latencies = log;
        Object[] cache = buildCache((int) cacheEntries);

        // The run's length counts from the schedule's start (below), not from here: the JVM
        // may take a while to load what follows, and the requests are what must last
        // --duration. The lifecycle handles the signals.
        long durationNs = options.durationNs("duration");
        Lifecycle run = new Lifecycle("OpenLoop", 0);
        long[] gcAtStart = Lifecycle.gcTotals();
        Recorder recorder = RequestSchedule.newRecorder();
        latencies.start(recorder, LatencyLog.comment("OpenLoop", rate), interval -> {
            if (printIntervals) {
                run.interval(run.line("interval")
                        .put("t_s", run.elapsedSeconds())
                        .put("requests", interval.getTotalCount())
                        .put("p50_ms", interval.getValueAtPercentile(50) / 1e6)
                        .put("p99_ms", interval.getValueAtPercentile(99) / 1e6)
                        .put("max_ms", interval.getMaxValue() / 1e6));
            }
        });
        // The schedule starts last, once everything is loaded and running: the first
        // request does not wait for the set-up.
        RequestSchedule schedule = new RequestSchedule(rate, System.nanoTime(), recorder);
        long deadlineNs = schedule.startNs() + durationNs;
        BooleanSupplier running = () -> run.running() && (durationNs == 0 || System.nanoTime() - deadlineNs < 0);
        AtomicLong endNs = new AtomicLong();
        run.summary(stopped -> {
            long end = endNs.get() != 0 ? endNs.get() : System.nanoTime();
            double elapsed = (end - schedule.startNs()) / 1e9;
            long scheduled = schedule.dueBy(end);
            long completed = schedule.completed();
            Histogram all = latencies.total();
            long[] gc = Lifecycle.gcTotals();
            return run.line("summary").put("stopped", stopped).put("elapsed_s", elapsed)
                    .put("rate_per_s", rate).put("size_bytes", size).put("work_bytes", work)
                    .put("live", live).put("cache", cache.length).put("threads", threads)
                    .put("scheduled", scheduled).put("completed", completed)
                    .put("completed_fraction", scheduled == 0 ? 1.0 : (double) completed / scheduled)
                    .put("completed_per_s", completed / elapsed)
                    .put("unfinished", schedule.unfinished(end))
                    .put("oldest_waiting_ms", schedule.oldestWaitingNs(end) / 1e6)
                    .put("max_queued", schedule.maxQueued())
                    .put("mib_per_s", completed * size / 1048576.0 / elapsed)
                    .put("latency_p50_ms", all.getValueAtPercentile(50) / 1e6)
                    .put("latency_p99_ms", all.getValueAtPercentile(99) / 1e6)
                    .put("latency_max_ms", all.getMaxValue() / 1e6)
                    .put("gc_count", gc[0] - gcAtStart[0]).put("gc_time_ms", gc[1] - gcAtStart[1]);
        });
        byte[][] kept = new byte[(int) live][];
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread worker = new Thread(() -> schedule.serve(running, n -> {
                byte[] array = new byte[(int) size];
                sink = hash(array, work, n);
                kept[(int) (n % live)] = array;
            }), "pauselab-worker-" + i);
            worker.start();
            workers.add(worker);
        }
        for (Thread worker : workers) {
            worker.join();
        }
        endNs.set(System.nanoTime());
        java.lang.ref.Reference.reachabilityFence(cache);
        if (!latencies.finish()) {
            System.err.println("OpenLoop: error: writing " + options.text("latency-log") + " failed (disk full?)");
        }
        run.finish(false);
    }

    /** {@code entries} distinct small objects, reachable until the run ends. */
    static Object[] buildCache(int entries) {
        Object[] cache = new Object[entries];
        for (int i = 0; i < entries; i++) {
            cache[i] = new long[] {i, (long) i * 31};
        }
        return cache;
    }

    /** Hashes {@code work} bytes of the array, going round it, writing as it reads. */
    static long hash(byte[] array, long work, long seed) {
        long h = seed;
        int i = 0;
        for (long done = 0; done < work; done++) {
            h = h * 31 + (array[i] ^ done);
            array[i] = (byte) h;
            i = i + 1 == array.length ? 0 : i + 1;
        }
        return h;
    }
}
