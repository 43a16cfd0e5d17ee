package pauselab.workload;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Generates N distinct classes and loads and initialises them with {@code Class.forName}
 * from T threads: class loading, linking and metaspace at scale (the CDS archive and G1
 * region-size experiment).
 */
public final class ClassStorm {
    static final String PACKAGE = "pauselab/generated/";

    private ClassStorm() {
    }

    /** Defines the generated classes on request; parallel capable, as application loaders are. */
    static final class GeneratedLoader extends ClassLoader {
        static {
            registerAsParallelCapable();
        }

        private final byte[][] classes;

        GeneratedLoader(byte[][] classes) {
            super(ClassStorm.class.getClassLoader());
            this.classes = classes;
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            String prefix = PACKAGE.replace('/', '.') + "Storm";
            if (name.startsWith(prefix)) {
                try {
                    int index = Integer.parseInt(name.substring(prefix.length()));
                    if (index >= 0 && index < classes.length) {
                        byte[] bytes = classes[index];
                        return defineClass(name, bytes, 0, bytes.length);
                    }
                } catch (NumberFormatException e) {
                    // Falls through to not found.
                }
            }
            throw new ClassNotFoundException(name);
        }
    }

    /** One class with a static field set by its initialiser and a method reading it. */
    static byte[] generate(int index) {
        String name = PACKAGE + "Storm" + index;
        ClassWriter writer = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        writer.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER, name, null,
                "java/lang/Object", null);
        writer.visitField(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "value", "J", null, null).visitEnd();
        MethodVisitor init = writer.visitMethod(Opcodes.ACC_STATIC, "<clinit>", "()V", null, null);
        init.visitCode();
        init.visitLdcInsn((long) index * 31 + 7);
        init.visitFieldInsn(Opcodes.PUTSTATIC, name, "value", "J");
        init.visitInsn(Opcodes.RETURN);
        init.visitMaxs(0, 0);
        init.visitEnd();
        MethodVisitor get = writer.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "value", "()J", null, null);
        get.visitCode();
        get.visitFieldInsn(Opcodes.GETSTATIC, name, "value", "J");
        get.visitInsn(Opcodes.LRETURN);
        get.visitMaxs(0, 0);
        get.visitEnd();
        writer.visitEnd();
        return writer.toByteArray();
    }

    public static void main(String[] args) throws InterruptedException {
        Options options = new Options("ClassStorm",
                "Generates N classes and loads and initialises them with Class.forName from T threads.")
                .number("classes", "100000", "distinct classes to generate and load")
                .number("threads", Integer.toString(Runtime.getRuntime().availableProcessors()),
                        "loading threads")
                .duration("duration", "0", "stop loading after this long; 0 loads them all")
                .duration("interval", "1s", "length of one --print-intervals line")
                .parse(args);
        long classCount = options.integer("classes");
        long threads = options.integer("threads");
        if (classCount < 1 || classCount > 10_000_000) {
            options.fail("--classes must be between 1 and 10000000, got " + classCount);
        }
        if (threads < 1 || threads > 1024) {
            options.fail("--threads must be between 1 and 1024, got " + threads);
        }
        long intervalNs = Math.max(1_000_000, options.durationNs("interval"));
        boolean printIntervals = options.flag("print-intervals");

        Lifecycle run = new Lifecycle("ClassStorm", options.durationNs("duration"));
        AtomicLong loaded = new AtomicLong();
        long[] phases = {0, 0}; // generation ns, load ns
        long[] gcAtStart = Lifecycle.gcTotals();
        run.summary(stopped -> {
            long[] gc = Lifecycle.gcTotals();
            double loadS = phases[1] / 1e9;
            return run.line("summary").put("stopped", stopped).put("elapsed_s", run.elapsedSeconds())
                    .put("classes", classCount).put("threads", threads).put("loaded", loaded.get())
                    .put("generate_s", phases[0] / 1e9).put("load_s", loadS)
                    .put("classes_per_s", loadS > 0 ? loaded.get() / loadS : Double.NaN)
                    .put("metaspace_used_bytes", poolUsed("Metaspace"))
                    .put("class_space_used_bytes", poolUsed("Compressed Class Space"))
                    .put("gc_count", gc[0] - gcAtStart[0]).put("gc_time_ms", gc[1] - gcAtStart[1]);
        });

        long start = System.nanoTime();
        byte[][] classes = new byte[(int) classCount][];
        for (int i = 0; i < classes.length && run.running(); i++) {
            classes[i] = generate(i);
        }
        phases[0] = System.nanoTime() - start;
        if (!run.running()) {
            run.finish(false);
            return;
        }

        GeneratedLoader loader = new GeneratedLoader(classes);
        String prefix = PACKAGE.replace('/', '.') + "Storm";
        List<Thread> workers = new ArrayList<>();
        Throwable[] failure = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            int first = t;
            Thread worker = new Thread(() -> {
                try {
                    for (int i = first; i < classCount && run.running(); i += (int) threads) {
                        Class.forName(prefix + i, true, loader);
                        loaded.incrementAndGet();
                    }
                } catch (ClassNotFoundException | LinkageError e) {
                    synchronized (failure) {
                        failure[0] = e;
                    }
                }
            }, "ClassStorm-" + t);
            worker.setDaemon(true);
            workers.add(worker);
        }
        long loadStart = System.nanoTime();
        workers.forEach(Thread::start);
        long nextInterval = loadStart + intervalNs;
        long loadedAtInterval = 0;
        for (Thread worker : workers) {
            while (worker.isAlive()) {
                worker.join(10);
                long now = System.nanoTime();
                if (printIntervals && now >= nextInterval) {
                    long count = loaded.get();
                    run.interval(run.line("interval").put("t_s", (now - loadStart) / 1e9)
                            .put("loaded", count)
                            .put("classes_per_s", (count - loadedAtInterval) / (intervalNs / 1e9)));
                    loadedAtInterval = count;
                    nextInterval += intervalNs;
                }
            }
        }
        phases[1] = System.nanoTime() - loadStart;
        synchronized (failure) {
            if (failure[0] != null) {
                System.err.println("ClassStorm: error: loading a generated class failed: " + failure[0]);
                run.finish(false);
                System.exit(1);
            }
        }
        run.finish(loaded.get() == classCount);
    }

    private static long poolUsed(String name) {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getName().equals(name)) {
                return pool.getUsage().getUsed();
            }
        }
        return -1;
    }
}
