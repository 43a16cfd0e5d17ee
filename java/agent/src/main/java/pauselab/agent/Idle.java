package pauselab.agent;

import java.io.IOException;

/**
 * An idle JVM: the control process beside a measured one, and a quiet subject for tests.
 * With no argument it runs until its standard input closes (so it ends with the process that
 * started it, even one killed with SIGKILL); with SECONDS it runs that long.
 */
public final class Idle {
    private Idle() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        if (args.length == 0) {
            byte[] buffer = new byte[256];
            while (System.in.read(buffer) >= 0) {
                // Discard: only the end of the stream matters.
            }
            return;
        }
        double seconds;
        try {
            seconds = Double.parseDouble(args[0]);
        } catch (NumberFormatException e) {
            System.err.println("usage: java -cp pauselab-agent.jar pauselab.agent.Idle [SECONDS]");
            System.exit(2);
            return;
        }
        Thread.sleep(Math.round(seconds * 1000));
    }
}
