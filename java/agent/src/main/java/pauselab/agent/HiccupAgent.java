package pauselab.agent;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.instrument.Instrumentation;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * The hiccup agent: {@code -javaagent:pauselab-agent.jar=OPTIONS} (see {@link AgentOptions#USAGE}).
 * Records platform hiccups the way jHiccup does into an HdrHistogram interval log.
 * Its threads are daemons, so it never keeps the JVM alive; a shutdown hook writes the last
 * interval.
 */
public final class HiccupAgent {
    private static boolean started;

    private HiccupAgent() {
    }

    public static void premain(String args, Instrumentation instrumentation) {
        start(args, true);
    }

    /** Loaded into a running JVM: a bad option is reported, never a reason to end that JVM. */
    public static void agentmain(String args, Instrumentation instrumentation) {
        start(args, false);
    }

    private static boolean exitOnError;

    private static synchronized void start(String args, boolean atStartup) {
        exitOnError = atStartup;
        if (started) {
            System.err.println("pauselab-agent: already recording in this JVM, ignoring the second start");
            return;
        }
        AgentOptions options;
        try {
            options = AgentOptions.parse(args);
        } catch (IllegalArgumentException e) {
            fail(e.getMessage());
            return;
        }
        if (options.help) {
            System.err.println(AgentOptions.USAGE);
            return;
        }
        String path = options.logPath(ProcessHandle.current().pid());
        PrintStream out;
        try {
            out = new PrintStream(new FileOutputStream(path), false, "US-ASCII");
        } catch (FileNotFoundException | java.io.UnsupportedEncodingException e) {
            fail("cannot write the hiccup log " + path + ": " + e.getMessage() + " (check the log= option)");
            return;
        }
        Process control = null;
        if (options.control) {
            try {
                control = startControl(path + ".c", options);
            } catch (Exception e) {
                fail("cannot start the control JVM: " + e.getMessage());
                return;
            }
        }
        AgentCost cost = options.cost ? new AgentCost() : null;
        long baseTimeMs = ManagementFactory.getRuntimeMXBean().getStartTime();
        IntervalLogger logger = new IntervalLogger(out, options, baseTimeMs, cost);
        Thread loggerThread = new Thread(logger, "pauselab-hiccup-logger");
        if (cost != null) {
            cost.loggerStarted(loggerThread);
        }
        started = true;
        final IntervalLogger finalLogger = logger;
        final Process finalControl = control;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (finalControl != null) {
                finalControl.destroy();
            }
            finalLogger.finish();
        }, "pauselab-hiccup-exit"));
        loggerThread.setDaemon(true);
        loggerThread.start();
    }

    /** An idle JVM beside this one, with the same agent options, logging to its own file. */
    private static Process startControl(String logPath, AgentOptions options) throws Exception {
        Path jar = Paths.get(HiccupAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        String tag = options.tag == null ? "control" : options.tag + "-control";
        List<String> command = new ArrayList<>();
        command.add(java);
        command.add("-Xms32m");
        command.add("-Xmx32m");
        command.add("-XX:+UseSerialGC");
        command.add("-javaagent:" + jar + "=" + AgentOptions.join(logPath, options.intervalNs,
                options.resolutionNs, options.delayNs, tag, options.cost));
        command.add("-cp");
        command.add(jar.toString());
        command.add(Idle.class.getName());
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        builder.redirectError(ProcessBuilder.Redirect.INHERIT);
        return builder.start();
    }

    private static void fail(String message) {
        System.err.println("pauselab-agent: error: " + message);
        if (exitOnError) {
            System.exit(2);
        }
    }
}
