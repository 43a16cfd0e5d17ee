package pauselab.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.junit.jupiter.api.Test;

/** The agent's interval lines are byte for byte what HistogramLogWriter writes. */
class IntervalLineEncoderTest {
    @Test
    void linesMatchHistogramLogWriter() {
        Random random = new Random(20261121);
        for (int round = 0; round < 300; round++) {
            String tag = round % 3 == 0 ? null : "t" + round;
            Histogram histogram = new Histogram(IntervalLogger.LOWEST_NS, IntervalLogger.HIGHEST_NS,
                    IntervalLogger.SIGNIFICANT_DIGITS);
            int values = round % 7 == 0 ? 0 : random.nextInt(3000);
            for (int i = 0; i < values; i++) {
                long value = (long) Math.pow(10, 3 + random.nextDouble() * 9.5);
                histogram.recordValue(Math.min(value, IntervalLogger.HIGHEST_NS));
            }
            long baseMs = 1_700_000_000_000L + random.nextInt(1_000_000_000);
            long startMs = baseMs + random.nextInt(10_000_000);
            histogram.setStartTimeStamp(startMs);
            histogram.setEndTimeStamp(startMs + random.nextInt(100_000));
            histogram.setTag(tag);

            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            PrintStream out = new PrintStream(expected, true);
            HistogramLogWriter writer = new HistogramLogWriter(out);
            writer.setBaseTime(baseMs);
            writer.outputIntervalHistogram(histogram);
            out.flush();

            IntervalLineEncoder encoder = new IntervalLineEncoder(tag);
            encoder.encode(histogram, baseMs);
            String actual = new String(encoder.bytes(), 0, encoder.length(), StandardCharsets.US_ASCII);
            assertEquals(expected.toString(), actual, "round " + round);
            // A second line from the same, reused encoder is the same.
            encoder.encode(histogram, baseMs);
            assertEquals(actual, new String(encoder.bytes(), 0, encoder.length(), StandardCharsets.US_ASCII));
        }
    }
}
