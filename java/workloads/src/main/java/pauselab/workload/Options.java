package pauselab.workload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Command-line options in {@code --name value} form (and {@code --flag}), shared by all
 * workloads so they read alike. {@code --help} prints the options and exits 0; a bad option
 * prints one line and exits 2.
 */
final class Options {
    private static final class Option {
        final String name;
        final String kind;
        final String defaultValue;
        final String help;
        String value;

        Option(String name, String kind, String defaultValue, String help) {
            this.name = name;
            this.kind = kind;
            this.defaultValue = defaultValue;
            this.help = help;
            this.value = defaultValue;
        }
    }

    private final String workload;
    private final String description;
    private final Map<String, Option> options = new LinkedHashMap<>();

    Options(String workload, String description) {
        this.workload = workload;
        this.description = description;
    }

    Options size(String name, String defaultValue, String help) {
        return add(name, "SIZE", defaultValue, help);
    }

    Options duration(String name, String defaultValue, String help) {
        return add(name, "TIME", defaultValue, help);
    }

    Options number(String name, String defaultValue, String help) {
        return add(name, "N", defaultValue, help);
    }

    Options flag(String name, String help) {
        return add(name, null, "false", help);
    }

    /** A file name; the empty default means "not given". */
    Options path(String name, String help) {
        return add(name, "PATH", "", help);
    }

    private Options add(String name, String kind, String defaultValue, String help) {
        options.put(name, new Option(name, kind, defaultValue, help));
        return this;
    }

    /** Parses the arguments; exits the JVM on --help or an error. */
    Options parse(String[] args) {
        if (!options.containsKey("print-intervals")) {
            flag("print-intervals", "print one JSON line per interval");
        }
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--help") || arg.equals("-h")) {
                System.out.println(usage());
                System.exit(0);
            }
            String name = arg.startsWith("--") ? arg.substring(2) : null;
            String inlineValue = null;
            if (name != null && name.contains("=")) {
                inlineValue = name.substring(name.indexOf('=') + 1);
                name = name.substring(0, name.indexOf('='));
            }
            Option option = name == null ? null : options.get(name);
            if (option == null) {
                fail("unknown argument '" + arg + "'");
            }
            if (option.kind == null) {
                option.value = "true";
            } else if (inlineValue != null) {
                option.value = inlineValue;
            } else if (i + 1 < args.length) {
                option.value = args[++i];
            } else {
                fail("--" + name + " needs a value (" + option.kind + ")");
            }
            validate(option);
        }
        return this;
    }

    private void validate(Option option) {
        if (option.kind == null) {
            return;
        }
        try {
            switch (option.kind) {
                case "SIZE": parseSize(option.value); break;
                case "TIME": parseDurationNs(option.value); break;
                case "PATH":
                    if (option.value.isEmpty()) {
                        throw new IllegalArgumentException("empty path");
                    }
                    break;
                default: Double.parseDouble(option.value); break;
            }
        } catch (IllegalArgumentException e) {
            fail("--" + option.name + ": '" + option.value + "' is not a valid " + option.kind
                    + " (try --help)");
        }
    }

    long size(String name) {
        return parseSize(get(name));
    }

    long durationNs(String name) {
        return parseDurationNs(get(name));
    }

    long integer(String name) {
        double value = Double.parseDouble(get(name));
        if (value != Math.rint(value)) {
            fail("--" + name + " must be a whole number, got " + get(name));
        }
        return (long) value;
    }

    double real(String name) {
        return Double.parseDouble(get(name));
    }

    boolean flag(String name) {
        return Boolean.parseBoolean(get(name));
    }

    String text(String name) {
        return get(name);
    }

    private String get(String name) {
        Option option = options.get(name);
        if (option == null) {
            throw new IllegalStateException("undeclared option " + name);
        }
        return option.value;
    }

    void fail(String message) {
        System.err.println(workload + ": error: " + message);
        System.exit(2);
    }

    String usage() {
        List<String> lines = new ArrayList<>();
        lines.add("usage: java -cp pauselab-workloads.jar pauselab.workload." + workload + " [--name value]...");
        lines.add(description);
        lines.add("");
        for (Option option : options.values()) {
            String left = "  --" + option.name + (option.kind == null ? "" : " " + option.kind);
            String right = option.help + (option.kind == null || option.defaultValue.isEmpty() ? ""
                    : " (default " + option.defaultValue + ")");
            lines.add(String.format(Locale.ROOT, "%-26s %s", left, right));
        }
        lines.add(String.format(Locale.ROOT, "%-26s %s", "  --help", "print this text"));
        lines.add("");
        lines.add("SIZE: bytes with an optional k, m or g suffix (powers of 1024); TIME: a number with");
        lines.add("ms, s, m or h (a bare number is seconds). Prints one JSON summary line on stdout at");
        lines.add("the end, also when stopped by SIGTERM or Ctrl-C.");
        return String.join("\n", lines);
    }

    static long parseSize(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long multiplier = 1;
        if (t.endsWith("b")) {
            t = t.substring(0, t.length() - 1);
        }
        if (t.endsWith("k")) {
            multiplier = 1L << 10;
        } else if (t.endsWith("m")) {
            multiplier = 1L << 20;
        } else if (t.endsWith("g")) {
            multiplier = 1L << 30;
        }
        if (multiplier != 1) {
            t = t.substring(0, t.length() - 1);
        }
        double value = Double.parseDouble(t);
        if (value < 0) {
            throw new IllegalArgumentException("negative size");
        }
        return Math.round(value * multiplier);
    }

    static long parseDurationNs(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        double unit = 1e9;
        String[][] units = {{"ms", "1e6"}, {"us", "1e3"}, {"ns", "1"}, {"s", "1e9"}, {"m", "60e9"}, {"h", "3600e9"}};
        for (String[] u : units) {
            if (t.endsWith(u[0])) {
                unit = Double.parseDouble(u[1]);
                t = t.substring(0, t.length() - u[0].length());
                break;
            }
        }
        double value = Double.parseDouble(t);
        if (value < 0) {
            throw new IllegalArgumentException("negative duration");
        }
        return Math.round(value * unit);
    }
}
