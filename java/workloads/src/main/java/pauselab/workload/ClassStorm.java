package pauselab.workload;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.jar.JarOutputStream;
import java.util.zip.Deflater;
import java.util.zip.ZipEntry;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Generates N distinct classes and loads and initialises them with {@code Class.forName}
 * from T threads: class loading, linking and metaspace at scale (the CDS archive and G1
 * region-size experiment).
 *
 * <p>Classes defined by a custom loader cannot go into a CDS archive, so the storm has a second
 * form: {@code --write-jar} writes the same classes into a jar once, and
 * {@code --from-classpath} loads them from the class path through the application loader,
 * which a CDS archive made from that class path can serve.
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

    /**
     * One class with two static fields set by its initialiser, a long and a reference to a new
     * object, and a method reading the long. The reference store lands in the class's mirror
     * (its java.lang.Class object), as a static logger or cache would: with CDS the mirror is
     * an archived object in an old heap region, so the store dirties a card there.
     */
    static byte[] generate(int index) {
        String name = PACKAGE + "Storm" + index;
        ClassWriter writer = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        writer.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER, name, null,
                "java/lang/Object", null);
        writer.visitField(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "value", "J", null, null).visitEnd();
        writer.visitField(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "ref", "Ljava/lang/Object;", null, null)
                .visitEnd();
        MethodVisitor init = writer.visitMethod(Opcodes.ACC_STATIC, "<clinit>", "()V", null, null);
        init.visitCode();
        init.visitLdcInsn((long) index * 31 + 7);
        init.visitFieldInsn(Opcodes.PUTSTATIC, name, "value", "J");
        init.visitTypeInsn(Opcodes.NEW, "java/lang/Object");
        init.visitInsn(Opcodes.DUP);
        init.visitMethodInsn(Opcodes.INVOKESPECIAL, "java/lang/Object", "<init>", "()V", false);
        init.visitFieldInsn(Opcodes.PUTSTATIC, name, "ref", "Ljava/lang/Object;");
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
                .path("write-jar", "write the N classes into this jar and exit without loading them")
                .flag("from-classpath", "load the N classes from the class path (a --write-jar jar) "
                        + "through the application loader instead of generating them")
                .size("allocate", "0", "then allocate this much short-lived garbage (64 KiB arrays), "
                        + "so young collections run after the class initialisers")
                .parse(args);
        long classCount = options.integer("classes");
        long threads = options.integer("threads");
        if (classCount < 1 || classCount > 10_000_000) {
            options.fail("--classes must be between 1 and 10000000, got " + classCount);
        }
        if (threads < 1 || threads > 1024) {
            options.fail("--threads must be between 1 and 1024, got " + threads);
        }
        String jar = options.text("write-jar");
        boolean fromClasspath = options.flag("from-classpath");
        if (!jar.isEmpty() && fromClasspath) {
            options.fail("--write-jar and --from-classpath exclude each other");
        }
        if (!jar.isEmpty()) {
            writeJar(Paths.get(jar), (int) classCount, new Lifecycle("ClassStorm", 0));
            return;
        }
        long intervalNs = Math.max(1_000_000, options.durationNs("interval"));
        boolean printIntervals = options.flag("print-intervals");

        Lifecycle run = new Lifecycle("ClassStorm", options.durationNs("duration"));
        AtomicLong loaded = new AtomicLong();
        long allocate = options.size("allocate");
        long[] phases = {0, 0, 0}; // generation ns, load ns, allocation ns
        long[] allocated = {0};
        long[] gcAtStart = Lifecycle.gcTotals();
        run.summary(stopped -> {
            long[] gc = Lifecycle.gcTotals();
            double loadS = phases[1] / 1e9;
            return run.line("summary").put("stopped", stopped).put("elapsed_s", run.elapsedSeconds())
                    .put("loader", fromClasspath ? "classpath" : "generated")
                    .put("classes", classCount).put("threads", threads).put("loaded", loaded.get())
                    .put("generate_s", phases[0] / 1e9).put("load_s", loadS)
                    .put("classes_per_s", loadS > 0 ? loaded.get() / loadS : Double.NaN)
                    .put("allocated_bytes", allocated[0]).put("allocate_s", phases[2] / 1e9)
                    .put("metaspace_used_bytes", poolUsed("Metaspace"))
                    .put("class_space_used_bytes", poolUsed("Compressed Class Space"))
                    .put("gc_count", gc[0] - gcAtStart[0]).put("gc_time_ms", gc[1] - gcAtStart[1]);
        });

        ClassLoader loader = ClassStorm.class.getClassLoader();
        if (!fromClasspath) {
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
            loader = new GeneratedLoader(classes);
        }

        ClassLoader source = loader;
        String prefix = PACKAGE.replace('/', '.') + "Storm";
        List<Thread> workers = new ArrayList<>();
        Throwable[] failure = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            int first = t;
            Thread worker = new Thread(() -> {
                try {
                    for (int i = first; i < classCount && run.running(); i += (int) threads) {
                        Class.forName(prefix + i, true, source);
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
                String hint = fromClasspath && failure[0] instanceof ClassNotFoundException
                        ? " (is the --write-jar jar, made with at least --classes " + classCount + ", on the class path?)"
                        : "";
                System.err.println("ClassStorm: error: loading a generated class failed: " + failure[0] + hint);
                run.finish(false);
                System.exit(1);
            }
        }
        long allocateStart = System.nanoTime();
        allocated[0] = allocateGarbage(allocate, run);
        phases[2] = System.nanoTime() - allocateStart;
        run.finish(loaded.get() == classCount && allocated[0] >= allocate);
    }

    /** Allocates up to {@code bytes} in 64 KiB arrays that die at once; returns the bytes allocated. */
    static long allocateGarbage(long bytes, Lifecycle run) {
        final int chunk = 64 * 1024;
        long done = 0;
        long checksum = 0;
        while (done < bytes && run.running()) {
            byte[] garbage = new byte[chunk];
            garbage[(int) (done / chunk) % chunk] = 1;
            checksum += garbage[0];
            done += chunk;
        }
        return checksum < 0 ? -1 : done;
    }

    /**
     * Writes classes 0..count-1 into {@code jar} (through a temporary file renamed into place,
     * so a jar under that name is always complete).
     */
    static void writeJar(Path jar, int count, Lifecycle run) {
        long start = System.nanoTime();
        long[] bytes = {0};
        int[] written = {0};
        run.summary(stopped -> run.line("summary").put("stopped", stopped)
                .put("elapsed_s", run.elapsedSeconds()).put("classes", count)
                .put("written", written[0]).put("jar_bytes", bytes[0])
                .put("generate_s", (System.nanoTime() - start) / 1e9));
        Path parent = jar.toAbsolutePath().getParent();
        Path partial = parent.resolve(jar.getFileName() + ".partial");
        try {
            try (OutputStream file = new BufferedOutputStream(Files.newOutputStream(partial), 1 << 20);
                    JarOutputStream out = new JarOutputStream(file)) {
                out.setLevel(Deflater.BEST_SPEED);
                for (int i = 0; i < count && run.running(); i++) {
                    out.putNextEntry(new ZipEntry(PACKAGE + "Storm" + i + ".class"));
                    out.write(generate(i));
                    out.closeEntry();
                    written[0]++;
                }
            }
            if (written[0] < count) {
                Files.deleteIfExists(partial);
                run.finish(false);
                return;
            }
            Files.move(partial, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            bytes[0] = Files.size(jar);
        } catch (IOException e) {
            System.err.println("ClassStorm: error: " + jar + ": cannot write the jar: " + e);
            try {
                Files.deleteIfExists(partial);
            } catch (IOException ignored) {
                // Already reported the first failure.
            }
            run.finish(false);
            System.exit(1);
        }
        run.finish(true);
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
