package pauselab.bench;

import java.util.Collection;
import java.util.Locale;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs {@link SocketWriteBenchmark} with the GC profiler and prints one table row per JFR
 * set-up: time per write and bytes allocated per write.
 * {@code --quick} runs shorter iterations (about a minute in all).
 */
public final class JfrOverhead {
    private JfrOverhead() {
    }

    public static void main(String[] args) throws RunnerException {
        boolean quick = false;
        for (String arg : args) {
            if (arg.equals("--quick")) {
                quick = true;
            } else {
                System.err.println("usage: java -cp pauselab-benchmarks.jar pauselab.bench.JfrOverhead [--quick]");
                System.exit(2);
            }
        }
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(SocketWriteBenchmark.class.getName() + ".writeOneByte")
                .addProfiler(GCProfiler.class)
                .verbosity(VerboseMode.SILENT);
        if (quick) {
            options.warmupIterations(2).warmupTime(TimeValue.seconds(1))
                    .measurementIterations(3).measurementTime(TimeValue.seconds(1));
        }
        Collection<RunResult> results = new Runner(options.build()).run();
        System.out.println(String.format(Locale.ROOT, "%-28s %10s %10s %10s", "JFR set-up", "us/op", "+-", "B/op"));
        for (RunResult run : results) {
            Result<?> time = run.getPrimaryResult();
            Result<?> bytes = run.getSecondaryResults().get("gc.alloc.rate.norm");
            System.out.println(String.format(Locale.ROOT, "%-28s %10.3f %10.3f %10.1f",
                    run.getParams().getParam("jfr"), time.getScore(), time.getScoreError(),
                    bytes == null ? Double.NaN : bytes.getScore()));
        }
        System.out.println("JDK " + System.getProperty("java.version") + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs; SocketChannel.write of 1 byte over loopback");
    }
}
