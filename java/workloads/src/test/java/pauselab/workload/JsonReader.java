package pauselab.workload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A strict JSON reader for the tests: rejects anything that is not one complete JSON value. */
final class JsonReader {
    private final String text;
    private int pos;

    private JsonReader(String text) {
        this.text = text;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(String text) {
        JsonReader reader = new JsonReader(text);
        Object value = reader.value();
        reader.skipSpace();
        if (reader.pos != text.length() || !(value instanceof Map)) {
            throw new IllegalArgumentException("not one JSON object: " + text);
        }
        return (Map<String, Object>) value;
    }

    private Object value() {
        skipSpace();
        char c = peek();
        if (c == '{') {
            Map<String, Object> map = new LinkedHashMap<>();
            pos++;
            skipSpace();
            if (peek() == '}') {
                pos++;
                return map;
            }
            do {
                skipSpace();
                String key = string();
                skipSpace();
                expect(':');
                if (map.put(key, value()) != null) {
                    throw error("duplicate key " + key);
                }
                skipSpace();
            } while (consume(','));
            expect('}');
            return map;
        }
        if (c == '[') {
            List<Object> list = new ArrayList<>();
            pos++;
            skipSpace();
            if (consume(']')) {
                return list;
            }
            do {
                list.add(value());
                skipSpace();
            } while (consume(','));
            expect(']');
            return list;
        }
        if (c == '"') {
            return string();
        }
        for (String word : new String[] {"true", "false", "null"}) {
            if (text.startsWith(word, pos)) {
                pos += word.length();
                return word.equals("null") ? null : Boolean.valueOf(word);
            }
        }
        int start = pos;
        while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
        try {
            return Double.parseDouble(text.substring(start, pos));
        } catch (NumberFormatException e) {
            throw error("bad value");
        }
    }

    private String string() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (peek() != '"') {
            char c = text.charAt(pos++);
            if (c == '\\') {
                char e = text.charAt(pos++);
                if (e == 'u') {
                    sb.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    pos += 4;
                } else {
                    sb.append(e == 'n' ? '\n' : e == 't' ? '\t' : e);
                }
            } else if (c < 0x20) {
                throw error("control character in string");
            } else {
                sb.append(c);
            }
        }
        pos++;
        return sb.toString();
    }

    private char peek() {
        if (pos >= text.length()) {
            throw error("unexpected end");
        }
        return text.charAt(pos);
    }

    private boolean consume(char c) {
        if (pos < text.length() && text.charAt(pos) == c) {
            pos++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        if (!consume(c)) {
            throw error("expected " + c);
        }
    }

    private void skipSpace() {
        while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
            pos++;
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(what + " at " + pos + " in: " + text);
    }
}
