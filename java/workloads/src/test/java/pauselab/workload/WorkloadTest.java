package pauselab.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Runs each workload in a real JVM from the built jar and checks what it prints. */
class WorkloadTest {
    static final String JAR = System.getProperty("pauselab.workloads.jar", "target/pauselab-workloads.jar");
    static final String JAVA = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";

    static final class Run {
        final int exitCode;
        final List<Map<String, Object>> lines;
        final String stderr;

        Run(int exitCode, List<Map<String, Object>> lines, String stderr) {
            this.exitCode = exitCode;
            this.lines = lines;
            this.stderr = stderr;
        }

        Map<String, Object> summary() {
            Map<String, Object> last = lines.get(lines.size() - 1);
            assertEquals("summary", last.get("type"), "last line " + last);
            return last;
        }
    }

    static Process start(List<String> jvmArgs, String workload, String... args) throws IOException {
        List<String> command = new ArrayList<>(Arrays.asList(JAVA, "-XX:+UseSerialGC"));
        command.addAll(jvmArgs);
        command.addAll(Arrays.asList("-cp", JAR, "pauselab.workload." + workload));
        command.addAll(Arrays.asList(args));
        return new ProcessBuilder(command).start();
    }

    /** Reads stdout as JSON lines; after signalAfterLines lines sends SIGTERM (0: never). */
    static Run collect(Process process, int signalAfterLines) throws Exception {
        List<Map<String, Object>> lines = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                lines.add(JsonReader.object(line));
                if (lines.size() == signalAfterLines) {
                    // Not Process.destroy(): it also closes the streams this reads.
                    new ProcessBuilder("kill", "-TERM", Long.toString(process.pid())).start().waitFor();
                }
            }
        }
        assertTrue(process.waitFor(60, TimeUnit.SECONDS));
        String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(!lines.isEmpty(), "no output; stderr: " + stderr);
        return new Run(process.exitValue(), lines, stderr);
    }

    static double number(Map<String, Object> line, String key) {
        Object value = line.get(key);
        assertTrue(value instanceof Double, key + " in " + line);
        return (Double) value;
    }

    @Test
    void makeGarbageRunsForItsDurationAndSummarises() throws Exception {
        Run run = collect(start(Arrays.asList("-Xmx64m"), "MakeGarbage",
                "--size", "256k", "--rate", "200", "--live", "4", "--duration", "2s",
                "--interval", "500ms", "--print-intervals"), 0);
        assertEquals(0, run.exitCode, run.stderr);
        assertTrue(run.stderr.isEmpty(), run.stderr);
        Map<String, Object> summary = run.summary();
        assertEquals("MakeGarbage", summary.get("workload"));
        assertEquals("duration", summary.get("stopped"));
        assertEquals(256 * 1024, number(summary, "size_bytes"));
        assertEquals(4, number(summary, "live"));
        assertTrue(number(summary, "elapsed_s") >= 2.0);
        double arrays = number(summary, "arrays");
        // Paced at 200/s for 2 s: never more than the schedule allows.
        assertTrue(arrays > 0 && arrays <= 401, "arrays " + arrays);
        assertEquals(arrays * 256 * 1024, number(summary, "bytes"));
        List<Map<String, Object>> intervals = run.lines.subList(0, run.lines.size() - 1);
        assertTrue(intervals.size() >= 2, "interval lines: " + intervals.size());
        double sum = 0;
        for (Map<String, Object> interval : intervals) {
            assertEquals("interval", interval.get("type"));
            sum += number(interval, "arrays");
        }
        assertTrue(sum <= arrays);
    }

    @Test
    void makeGarbageStopsCleanlyOnSigterm() throws Exception {
        Run run = collect(start(Arrays.asList("-Xmx64m"), "MakeGarbage",
                "--size", "64k", "--rate", "100", "--duration", "0", "--interval", "200ms",
                "--print-intervals"), 2);
        assertEquals(143, run.exitCode, "128 + SIGTERM");
        assertTrue(run.stderr.isEmpty(), run.stderr);
        Map<String, Object> summary = run.summary();
        assertEquals("signal", summary.get("stopped"));
        assertTrue(number(summary, "arrays") > 0);
        assertEquals(1, run.lines.stream().filter(l -> "summary".equals(l.get("type"))).count());
    }

    @Test
    void badArgumentIsOneLineAndExitTwo() throws Exception {
        Process process = start(Arrays.asList(), "MakeGarbage", "--size", "lots");
        assertTrue(process.waitFor(60, TimeUnit.SECONDS));
        String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(2, process.exitValue());
        assertEquals("MakeGarbage: error: --size: 'lots' is not a valid SIZE (try --help)\n", stderr);
    }
}
