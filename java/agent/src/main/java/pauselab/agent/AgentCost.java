package pauselab.agent;

import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * The agent's own cost: CPU time and bytes allocated by its two threads, in total and in the
 * steady state (after the first intervals, when every lazy initialisation is done).
 * Loaded only with the {@code cost} option, so the agent does not load java.management otherwise.
 */
final class AgentCost {
    private final com.sun.management.ThreadMXBean threads;
    private final long startNs = System.nanoTime();
    private volatile long loggerId = -1;
    private volatile long samplerId = -1;
    private final long[] steady = new long[5];
    private volatile boolean steadyMarked;
    private final long[] end = new long[5];

    AgentCost() {
        this.threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        if (threads.isThreadCpuTimeSupported()) {
            threads.setThreadCpuTimeEnabled(true);
        }
        if (threads.isThreadAllocatedMemorySupported()) {
            threads.setThreadAllocatedMemoryEnabled(true);
        }
    }

    void loggerStarted(Thread logger) {
        loggerId = logger.getId();
    }

    void samplerStarted(Thread sampler) {
        samplerId = sampler.getId();
    }

    void markSteadyState() {
        snapshot(steady);
        steadyMarked = true;
    }

    void markEnd() {
        snapshot(end);
    }

    private void snapshot(long[] into) {
        into[0] = System.nanoTime();
        into[1] = threads.getThreadCpuTime(samplerId);
        into[2] = threads.getThreadAllocatedBytes(samplerId);
        into[3] = threads.getThreadCpuTime(loggerId);
        into[4] = threads.getThreadAllocatedBytes(loggerId);
    }

    String toJson(long samples) {
        double elapsedS = (end[0] - startNs) / 1e9;
        long cpuNs = Math.max(0, end[1]) + Math.max(0, end[3]);
        StringBuilder sb = new StringBuilder(400);
        sb.append(String.format(Locale.ROOT,
                "{\"type\":\"agent_cost\",\"pid\":%d,\"elapsed_s\":%.3f,\"samples\":%d,"
                        + "\"sampler_cpu_ms\":%.3f,\"logger_cpu_ms\":%.3f,\"cpu_percent_of_one_core\":%.4f,"
                        + "\"sampler_allocated_bytes\":%d,\"logger_allocated_bytes\":%d",
                ProcessHandle.current().pid(), elapsedS, samples, end[1] / 1e6, end[3] / 1e6,
                elapsedS > 0 ? 100.0 * cpuNs / 1e9 / elapsedS : 0.0, end[2], end[4]));
        if (steadyMarked) {
            double steadyS = (end[0] - steady[0]) / 1e9;
            long steadyCpuNs = (end[1] - steady[1]) + (end[3] - steady[3]);
            sb.append(String.format(Locale.ROOT,
                    ",\"steady_s\":%.3f,\"steady_cpu_percent_of_one_core\":%.4f,"
                            + "\"sampler_steady_allocated_bytes\":%d,\"logger_steady_allocated_bytes\":%d",
                    steadyS, steadyS > 0 ? 100.0 * steadyCpuNs / 1e9 / steadyS : 0.0,
                    end[2] - steady[2], end[4] - steady[4]));
        }
        return sb.append('}').toString();
    }
}
