package pauselab.agent;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.Deflater;
import org.HdrHistogram.Histogram;

/**
 * Formats one interval line exactly as {@code HistogramLogWriter.outputIntervalHistogram}
 * does ({@code [Tag=T,]start,length,max,base64} with the V2 compressed histogram), but
 * into buffers it keeps, so that writing an interval allocates nothing once they have grown
 * to size. HistogramLogWriter makes a new Deflater, a copy of the bytes, a Base64 string
 * and a formatted string for every line.
 */
final class IntervalLineEncoder {
    /** What {@code AbstractHistogram.encodeIntoCompressedByteBuffer} writes before the zlib data. */
    private static final int COMPRESSED_COOKIE_V2 = 0x1c849314;
    private static final byte[] BASE64 =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".getBytes(StandardCharsets.US_ASCII);

    private final byte[] tagPrefix;
    private final Deflater deflater = new Deflater(Deflater.BEST_COMPRESSION);
    private ByteBuffer uncompressed = ByteBuffer.allocate(0);
    private byte[] compressed = new byte[0];
    private byte[] line = new byte[0];
    private int length;

    IntervalLineEncoder(String tag) {
        this.tagPrefix = tag == null ? new byte[0] : ("Tag=" + tag + ",").getBytes(StandardCharsets.US_ASCII);
    }

    /** Formats the line for a histogram; timestamps are ms since the epoch, base time included. */
    void encode(Histogram histogram, long baseTimeMs) {
        int needed = histogram.getNeededByteBufferCapacity();
        if (uncompressed.capacity() < needed) {
            uncompressed = ByteBuffer.allocate(needed).order(ByteOrder.BIG_ENDIAN);
            compressed = new byte[needed + 64];
            // Base64 of the compressed form, plus the tag, three numbers and separators.
            line = new byte[tagPrefix.length + 4 * ((compressed.length + 2) / 3) + 96];
        }
        uncompressed.clear();
        int uncompressedLength = histogram.encodeIntoByteBuffer(uncompressed);
        deflater.reset();
        deflater.setInput(uncompressed.array(), 0, uncompressedLength);
        deflater.finish();
        int compressedLength = 8;
        while (!deflater.finished()) {
            if (compressedLength == compressed.length) {
                byte[] larger = new byte[compressed.length * 2];
                System.arraycopy(compressed, 0, larger, 0, compressedLength);
                compressed = larger;
                line = new byte[tagPrefix.length + 4 * ((compressed.length + 2) / 3) + 96];
            }
            compressedLength += deflater.deflate(compressed, compressedLength, compressed.length - compressedLength);
        }
        putInt(compressed, 0, COMPRESSED_COOKIE_V2);
        putInt(compressed, 4, compressedLength - 8);

        length = 0;
        System.arraycopy(tagPrefix, 0, line, 0, tagPrefix.length);
        length = tagPrefix.length;
        long startMs = histogram.getStartTimeStamp() - baseTimeMs;
        long endMs = histogram.getEndTimeStamp() - baseTimeMs;
        putFixed3(startMs);
        line[length++] = ',';
        putFixed3(endMs - startMs);
        line[length++] = ',';
        // Max in ms with three decimals, rounded half up as Formatter's %.3f does.
        putFixed3((histogram.getMaxValue() + 500) / 1000);
        line[length++] = ',';
        putBase64(compressed, compressedLength);
        line[length++] = '\n';
    }

    byte[] bytes() {
        return line;
    }

    int length() {
        return length;
    }

    /** Writes thousandths as a decimal with three places: 1234 -> "1.234", -5 -> "-0.005". */
    private void putFixed3(long thousandths) {
        if (thousandths < 0) {
            line[length++] = '-';
            thousandths = -thousandths;
        }
        putDigits(thousandths / 1000);
        line[length++] = '.';
        long fraction = thousandths % 1000;
        line[length++] = (byte) ('0' + fraction / 100);
        line[length++] = (byte) ('0' + fraction / 10 % 10);
        line[length++] = (byte) ('0' + fraction % 10);
    }

    private void putDigits(long value) {
        int digits = 1;
        for (long v = value / 10; v > 0; v /= 10) {
            digits++;
        }
        for (int i = digits - 1; i >= 0; i--) {
            line[length + i] = (byte) ('0' + value % 10);
            value /= 10;
        }
        length += digits;
    }

    private void putBase64(byte[] data, int dataLength) {
        int i = 0;
        for (; i + 2 < dataLength; i += 3) {
            int bits = (data[i] & 0xff) << 16 | (data[i + 1] & 0xff) << 8 | (data[i + 2] & 0xff);
            line[length++] = BASE64[bits >>> 18];
            line[length++] = BASE64[bits >>> 12 & 0x3f];
            line[length++] = BASE64[bits >>> 6 & 0x3f];
            line[length++] = BASE64[bits & 0x3f];
        }
        int rest = dataLength - i;
        if (rest > 0) {
            int bits = (data[i] & 0xff) << 16 | (rest == 2 ? (data[i + 1] & 0xff) << 8 : 0);
            line[length++] = BASE64[bits >>> 18];
            line[length++] = BASE64[bits >>> 12 & 0x3f];
            line[length++] = rest == 2 ? BASE64[bits >>> 6 & 0x3f] : (byte) '=';
            line[length++] = '=';
        }
    }

    private static void putInt(byte[] target, int offset, int value) {
        target[offset] = (byte) (value >>> 24);
        target[offset + 1] = (byte) (value >>> 16);
        target[offset + 2] = (byte) (value >>> 8);
        target[offset + 3] = (byte) value;
    }
}
