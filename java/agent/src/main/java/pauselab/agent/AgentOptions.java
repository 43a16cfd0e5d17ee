package pauselab.agent;

import java.net.InetAddress;
import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The hiccup agent's options: {@code key=value} pairs separated by commas, booleans as a bare
 * key, e.g. {@code -javaagent:pauselab-agent.jar=log=hiccup.%pid.hlog,interval=1s,control}.
 */
final class AgentOptions {
    static final String USAGE = String.join("\n",
            "pauselab hiccup agent: -javaagent:pauselab-agent.jar[=OPTION,OPTION...]",
            "  log=PATH        interval log to write (default hiccup.%pid.hlog);",
            "                  %pid, %date (yyMMdd.HHmm) and %host are replaced",
            "  interval=TIME   length of one logged interval (default 1s)",
            "  resolution=TIME how long the sampling thread sleeps each time (default 1ms)",
            "  delay=TIME      wait this long after start before recording (default 0)",
            "  tag=NAME        tag written on every interval line (default none)",
            "  control         also run an idle control JVM, logging to PATH.c",
            "  cost            print the agent's own CPU and allocation as one JSON line",
            "                  on stderr when the JVM exits",
            "  help            print this text",
            "TIME is a number with a unit ns, us, ms, s, m or h (a bare number is ms).");

    String logPattern = "hiccup.%pid.hlog";
    long intervalNs = TimeUnit.SECONDS.toNanos(1);
    long resolutionNs = TimeUnit.MILLISECONDS.toNanos(1);
    long delayNs = 0;
    String tag;
    boolean control;
    boolean cost;
    boolean help;

    static AgentOptions parse(String text) {
        AgentOptions options = new AgentOptions();
        if (text == null || text.trim().isEmpty()) {
            return options;
        }
        for (String item : text.split(",")) {
            String entry = item.trim();
            if (entry.isEmpty()) {
                continue;
            }
            int eq = entry.indexOf('=');
            String key = eq < 0 ? entry : entry.substring(0, eq).trim();
            String value = eq < 0 ? null : entry.substring(eq + 1).trim();
            switch (key) {
                case "log":
                    options.logPattern = required(key, value);
                    break;
                case "interval":
                    options.intervalNs = duration(key, value);
                    if (options.intervalNs < TimeUnit.MILLISECONDS.toNanos(1)) {
                        throw new IllegalArgumentException("interval must be at least 1ms, got " + value);
                    }
                    break;
                case "resolution":
                    options.resolutionNs = duration(key, value);
                    break;
                case "delay":
                    options.delayNs = duration(key, value);
                    break;
                case "tag":
                    options.tag = required(key, value);
                    if (!options.tag.matches("[A-Za-z0-9_.:-]+")) {
                        throw new IllegalArgumentException(
                                "tag may hold only letters, digits and _ . : -, got '" + value + "'");
                    }
                    break;
                case "control":
                    options.control = bool(key, value);
                    break;
                case "cost":
                    options.cost = bool(key, value);
                    break;
                case "help":
                    options.help = true;
                    break;
                default:
                    throw new IllegalArgumentException("unknown option '" + key + "' (try help)");
            }
        }
        return options;
    }

    /** The log path with %pid, %date and %host replaced. */
    String logPath(long pid) {
        String path = logPattern.replace("%pid", Long.toString(pid));
        if (path.contains("%date")) {
            path = path.replace("%date", new SimpleDateFormat("yyMMdd.HHmm", Locale.ROOT).format(new Date()));
        }
        if (path.contains("%host")) {
            path = path.replace("%host", hostName());
        }
        return path;
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "localhost";
        }
    }

    private static String required(String key, String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("option " + key + " needs a value, e.g. " + key + "=...");
        }
        return value;
    }

    private static boolean bool(String key, String value) {
        if (value == null || value.equals("true")) {
            return true;
        }
        if (value.equals("false")) {
            return false;
        }
        throw new IllegalArgumentException("option " + key + " takes true or false, got '" + value + "'");
    }

    static long duration(String key, String value) {
        String text = required(key, value);
        int unitStart = 0;
        while (unitStart < text.length()
                && (Character.isDigit(text.charAt(unitStart)) || text.charAt(unitStart) == '.')) {
            unitStart++;
        }
        double number;
        try {
            number = Double.parseDouble(text.substring(0, unitStart));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option " + key + ": '" + value + "' is not a duration like 1ms or 5s");
        }
        double nanosPerUnit;
        switch (text.substring(unitStart)) {
            case "ns": nanosPerUnit = 1; break;
            case "us": nanosPerUnit = 1e3; break;
            case "": case "ms": nanosPerUnit = 1e6; break;
            case "s": nanosPerUnit = 1e9; break;
            case "m": nanosPerUnit = 60e9; break;
            case "h": nanosPerUnit = 3600e9; break;
            default:
                throw new IllegalArgumentException("option " + key + ": unknown unit in '" + value
                        + "' (use ns, us, ms, s, m or h)");
        }
        return Math.round(number * nanosPerUnit);
    }

    /** The same options as text, for the control JVM. */
    static String join(String log, long intervalNs, long resolutionNs, long delayNs, String tag, boolean cost) {
        StringBuilder sb = new StringBuilder();
        sb.append("log=").append(log)
                .append(",interval=").append(intervalNs).append("ns")
                .append(",resolution=").append(resolutionNs).append("ns")
                .append(",delay=").append(delayNs).append("ns");
        if (tag != null) {
            sb.append(",tag=").append(tag);
        }
        if (cost) {
            sb.append(",cost");
        }
        return sb.toString();
    }
}
