package pauselab.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.text.ParseException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Configuration;
import jdk.jfr.EventSettings;
import jdk.jfr.Recording;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of JFR's socket instrumentation: {@code SocketChannel.write} of one byte over
 * loopback with JFR off, with JFR on (default settings) but {@code jdk.SocketWrite}
 * disabled, and with {@code jdk.SocketWrite} enabled at threshold 0 and throttling off,
 * so every write emits an event.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class SocketWriteBenchmark {
    public static final String JFR_OFF = "off";
    public static final String SOCKET_WRITE_DISABLED = "socket-write-disabled";
    public static final String SOCKET_WRITE_ENABLED = "socket-write-enabled";

    @Param({JFR_OFF, SOCKET_WRITE_DISABLED, SOCKET_WRITE_ENABLED})
    public String jfr;

    private ServerSocketChannel server;
    private SocketChannel client;
    private SocketChannel peer;
    private Thread drain;
    private Recording recording;
    private final ByteBuffer oneByte = ByteBuffer.wrap(new byte[] {42});

    @Setup(Level.Trial)
    public void setUp() throws IOException, ParseException {
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        client = SocketChannel.open(server.getLocalAddress());
        client.setOption(StandardSocketOptions.TCP_NODELAY, true);
        peer = server.accept();
        drain = new Thread(this::drain, "drain");
        drain.setDaemon(true);
        drain.start();
        if (!jfr.equals(JFR_OFF)) {
            recording = new Recording(Configuration.getConfiguration("default"));
            if (jfr.equals(SOCKET_WRITE_DISABLED)) {
                recording.disable("jdk.SocketWrite");
            } else {
                EventSettings settings = recording.enable("jdk.SocketWrite").withThreshold(Duration.ZERO);
                // JDKs with event throttling (25+) cap jdk.SocketWrite at 100/s by default;
                // older JDKs ignore the unknown setting.
                settings.with("throttle", "off");
            }
            recording.start();
        }
    }

    /** Reads everything the client writes, so the socket buffers never fill. */
    private void drain() {
        ByteBuffer sink = ByteBuffer.allocateDirect(1 << 16);
        try {
            while (peer.read(sink) >= 0) {
                sink.clear();
            }
        } catch (IOException e) {
            // The channel was closed by tearDown.
        }
    }

    @Benchmark
    public int writeOneByte() throws IOException {
        oneByte.clear();
        return client.write(oneByte);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException, InterruptedException {
        if (recording != null) {
            recording.stop();
            recording.close();
        }
        client.close();
        drain.join(5_000);
        peer.close();
        server.close();
    }
}
