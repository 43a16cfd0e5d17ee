package pauselab.workload;

import java.util.Locale;

/** A one-line JSON object, built field by field in order. */
final class Json {
    private final StringBuilder text = new StringBuilder(256).append('{');

    Json put(String key, String value) {
        key(key);
        if (value == null) {
            text.append("null");
        } else {
            quote(value);
        }
        return this;
    }

    Json put(String key, long value) {
        key(key);
        text.append(value);
        return this;
    }

    Json put(String key, boolean value) {
        key(key);
        text.append(value);
        return this;
    }

    /** Three decimals: enough for milliseconds and seconds, stable to read and diff. */
    Json put(String key, double value) {
        key(key);
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            text.append("null");
        } else {
            text.append(String.format(Locale.ROOT, "%.3f", value));
        }
        return this;
    }

    private void key(String key) {
        if (text.length() > 1) {
            text.append(',');
        }
        quote(key);
        text.append(':');
    }

    private void quote(String value) {
        text.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                text.append('\\').append(c);
            } else if (c < 0x20) {
                text.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                text.append(c);
            }
        }
        text.append('"');
    }

    @Override
    public String toString() {
        return text.toString() + '}';
    }
}
