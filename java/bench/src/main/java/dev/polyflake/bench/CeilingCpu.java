package dev.polyflake.bench;

import cn.hutool.core.lang.Snowflake;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * What a strict generator costs in CPU when asked for more than its layout allows: one thread
 * calls {@code nextId()} flat out on one generator on the default layout 41/10/12 (at most 4,096
 * IDs per ms: 4,096,000 per second), so every millisecond's sequence is spent within it and the
 * call waits for the next. polyflake's Java face parks the thread for that wait
 * ({@code LockSupport.parkNanos}, in 200 us slices); Hutool's {@code Snowflake#nextId} spins on
 * {@code System.currentTimeMillis()} inside its lock. Printed per side: the rate reached, and the
 * CPU time the calling thread and the whole process took per wall-clock second over the timed
 * span (the process figure includes the JIT and GC threads).
 *
 * <p>Not JMH: the figure is CPU time against wall time over seconds, not time per call. The sides
 * alternate round by round (polyflake first in even rounds), each with a warm-up before its timed
 * span; the medians over rounds are printed last.
 *
 * <pre>
 * java -cp CLASSPATH dev.polyflake.bench.CeilingCpu [SECONDS per span, default 3] [ROUNDS, default 3]
 * </pre>
 */
public final class CeilingCpu {
    private CeilingCpu() {}

    /** Calls between two reads of the wall clock while timing. */
    private static final int CHUNK = 1024;

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean OS =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /** Keeps the IDs alive so the loop is not optimized away. */
    static long sink;

    /** One timed span's figures. */
    private static final class Span {
        final double idsPerSecond;
        final double threadCpuPerWall;
        final double processCpuPerWall;

        Span(double idsPerSecond, double threadCpuPerWall, double processCpuPerWall) {
            this.idsPerSecond = idsPerSecond;
            this.threadCpuPerWall = threadCpuPerWall;
            this.processCpuPerWall = processCpuPerWall;
        }
    }

    /** Call {@code next} flat out for {@code nanos}: the rate and the CPU time per wall second. */
    private static Span run(LongSupplier next, long nanos) {
        long acc = 0;
        long n = 0;
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        long proc0 = OS.getProcessCpuTime();
        long t0 = System.nanoTime();
        long t;
        do {
            for (int i = 0; i < CHUNK; i++) {
                acc ^= next.getAsLong();
            }
            n += CHUNK;
            t = System.nanoTime();
        } while (t - t0 < nanos);
        long cpu = THREADS.getCurrentThreadCpuTime() - cpu0;
        long proc = OS.getProcessCpuTime() - proc0;
        sink ^= acc;
        double wall = t - t0;
        return new Span(n / (wall / 1e9), cpu / wall, proc / wall);
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3.0;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        long span = (long) (seconds * 1e9);
        long warm = 1_000_000_000L;

        // Static node id with the restart guard off (no mark on the host) in a host scope of
        // the benchmark's own (IdBench.builder), strict mode, the default layout.
        dev.polyflake.Snowflake poly = IdBench.builder(900).build();
        Snowflake hutool = new Snowflake(1, 1);
        String[] names = {"polyflake Snowflake.nextId() (strict, 41/10/12)", "Hutool 5.8 Snowflake#nextId (5+5 node bits, 12 sequence bits)"};
        LongSupplier[] sides = {poly::nextId, hutool::nextId};
        Span[][] got = new Span[2][rounds];

        System.out.printf(Locale.ROOT, "CeilingCpu: %s %s, %s; %d CPUs; load %s; %d rounds of %.1f s per side%n",
            System.getProperty("java.vm.name"), System.getProperty("java.vm.version"), System.getProperty("os.name"),
            Runtime.getRuntime().availableProcessors(), load(), rounds, seconds);
        for (int round = 0; round < rounds; round++) {
            for (int k = 0; k < 2; k++) {
                int s = round % 2 == 0 ? k : 1 - k;
                run(sides[s], warm);
                Span r = run(sides[s], span);
                got[s][round] = r;
                System.out.printf(Locale.ROOT, "round %d  %-62s %6.3f M IDs/s  thread %.3f CPU-s/s  process %.3f CPU-s/s%n",
                    round + 1, names[s], r.idsPerSecond / 1e6, r.threadCpuPerWall, r.processCpuPerWall);
            }
        }
        System.out.println("medians over rounds:");
        for (int s = 0; s < 2; s++) {
            double[] rate = new double[rounds];
            double[] thread = new double[rounds];
            double[] process = new double[rounds];
            for (int i = 0; i < rounds; i++) {
                rate[i] = got[s][i].idsPerSecond;
                thread[i] = got[s][i].threadCpuPerWall;
                process[i] = got[s][i].processCpuPerWall;
            }
            System.out.printf(Locale.ROOT, "  %-62s %6.3f M IDs/s  thread %.3f CPU-s/s  process %.3f CPU-s/s%n",
                names[s], median(rate) / 1e6, median(thread), median(process));
        }
        System.out.printf(Locale.ROOT, "load after: %s%n", load());
        poly.close();
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static String load() {
        try {
            String l = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("/proc/loadavg")),
                java.nio.charset.StandardCharsets.US_ASCII);
            String[] f = l.trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (java.io.IOException e) {
            return "?";
        }
    }
}
