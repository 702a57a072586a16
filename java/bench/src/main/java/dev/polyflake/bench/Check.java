package dev.polyflake.bench;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * The check mode of the Java benchmark ({@code make bench-check-java}, .build/mk/java.mk): a few
 * {@link IdBench} cases and their references, run in rounds. A round runs every case once, each
 * in a fresh JVM (one JMH fork) with short warm-up and measurement iterations, references first
 * (the order reversed every other round, so a drift in the machine's load falls on both sides of
 * a ratio alike). Each row's ratio is the median over rounds of (case ns / reference ns) of the
 * same round; its {@code ns} and {@code reference_ns} are the medians of the rounds' scores.
 *
 * <p>Stdout carries only the rows, one JSON object per line (the gate, {@code make bench-check},
 * reads them); JMH's own output, each round's ratios and the ratios to the second reference go to
 * stderr.
 *
 * <pre>
 * java -cp CLASSPATH dev.polyflake.bench.Check ROUNDS [JMH options, e.g. -wi 2 -w 200ms -i 3 -r 200ms]
 * </pre>
 */
public final class Check {
    private Check() {}

    private static final String PREFIX = IdBench.class.getName() + ".";

    /** A reference: its label in the rows and the case that measures it. */
    private static final class Ref {
        final String label;
        final String method;

        Ref(String label, String method) {
            this.label = label;
            this.method = method;
        }
    }

    private static final Ref CLOCK = new Ref("System.currentTimeMillis()", "clockCurrentTimeMillis");
    private static final Ref HUTOOL = new Ref("Hutool Snowflake#nextId", "hutoolNextId");
    private static final Ref UUID_CREATOR = new Ref("uuid-creator getTimeOrderedEpoch()", "uuidCreatorTimeOrderedEpoch");

    /** A row: its stable name, the case, the reference its ratio is to, and a second one shown on stderr. */
    private static final class Row {
        final String name;
        final String method;
        final Ref ref;
        final Ref second;

        Row(String name, String method, Ref ref, Ref second) {
            this.name = name;
            this.method = method;
            this.ref = ref;
            this.second = second;
        }
    }

    /**
     * The rows. Every ratio is to the clock read: the least a time-based ID costs, and the
     * steadier reference (three runs of this check at load 3 on 2 cores: each row's median ratio
     * to the clock within 7% of the mean of the three, to Hutool's {@code nextId} within 14%, to
     * uuid-creator within 6% but 0.2x to 0.6x from round to round; BENCHMARKS.md's Java section).
     * The peer's ratio goes to stderr beside it.
     */
    private static final List<Row> ROWS = Arrays.asList(
        new Row("java nextId strict", "polyflakeStrictNextIdOneGenerator", CLOCK, HUTOOL),
        new Row("java nextId strict coarse", "polyflakeCoarseNextIdOneGenerator", CLOCK, HUTOOL),
        new Row("java nextId monotonic", "polyflakeMonotonicNextId", CLOCK, HUTOOL),
        new Row("java nextId monotonic coarse", "polyflakeMonotonicCoarseNextId", CLOCK, HUTOOL),
        new Row("java nextIds(4096) per id", "polyflakeNextIds4096", CLOCK, null),
        new Row("java nextIds(long[4096]) per id", "polyflakeNextIdsIntoBuffer4096", CLOCK, null),
        new Row("java uuid7", "polyflakeUuid7", CLOCK, UUID_CREATOR),
        new Row("java ulid", "polyflakeUlid", CLOCK, null));

    public static void main(String[] args) throws RunnerException, CommandLineOptionException {
        PrintStream rowsOut = System.out;
        // Anything else that prints (JMH, a JVM warning) goes to stderr.
        System.setOut(System.err);
        if (args.length < 1) {
            System.err.println("usage: Check ROUNDS [JMH options]");
            System.exit(2);
        }
        int rounds = Integer.parseInt(args[0]);
        CommandLineOptions cmd = new CommandLineOptions(Arrays.copyOfRange(args, 1, args.length));

        // Each method once per round: the references first, then the cases.
        LinkedHashSet<String> methods = new LinkedHashSet<>();
        for (Row r : ROWS) {
            methods.add(r.ref.method);
            if (r.second != null) {
                methods.add(r.second.method);
            }
        }
        for (Row r : ROWS) {
            methods.add(r.method);
        }
        Map<String, double[]> ns = new LinkedHashMap<>();
        for (String m : methods) {
            ns.put(m, new double[rounds]);
        }

        long start = System.nanoTime();
        for (int round = 0; round < rounds; round++) {
            List<String> order = new ArrayList<>(methods);
            if (round % 2 == 1) {
                java.util.Collections.reverse(order);
            }
            for (String m : order) {
                ns.get(m)[round] = score(cmd, m);
            }
            System.err.printf(Locale.ROOT, "bench-check-java: round %d of %d done (%.0f s)%n", round + 1, rounds,
                (System.nanoTime() - start) / 1e9);
        }

        System.err.println("ns per operation, per round:");
        for (Map.Entry<String, double[]> e : ns.entrySet()) {
            System.err.printf(Locale.ROOT, "  %-36s %s%n", e.getKey(), fmt(e.getValue()));
        }
        for (Row r : ROWS) {
            double[] c = ns.get(r.method);
            double[] ratios = ratios(c, ns.get(r.ref.method));
            rowsOut.printf(Locale.ROOT, "{\"row\": \"%s\", \"ns\": %s, \"reference\": \"%s\", \"reference_ns\": %s, \"ratio\": %s}%n",
                r.name, num(median(c)), r.ref.label, num(median(ns.get(r.ref.method))), num(median(ratios)));
            StringBuilder why = new StringBuilder();
            why.append(String.format(Locale.ROOT, "%-32s ratio per round %s", r.name, fmt(ratios)));
            if (r.second != null) {
                double[] second = ratios(c, ns.get(r.second.method));
                why.append(String.format(Locale.ROOT, "; to %s: median %.4g, per round %s", r.second.label,
                    median(second), fmt(second)));
            }
            System.err.println(why);
        }
        rowsOut.flush();
    }

    /** One fork of one case with the command line's iterations: its mean ns per operation. */
    private static double score(CommandLineOptions cmd, String method) throws RunnerException {
        Options opt = new OptionsBuilder().parent(cmd)
            .include("^" + Pattern.quote(PREFIX + method) + "$")
            .forks(1)
            .shouldFailOnError(true)
            .build();
        VerboseMode v = cmd.verbosity().orElse(VerboseMode.SILENT);
        Collection<RunResult> results = new Runner(opt, OutputFormatFactory.createFormatInstance(System.err, v)).run();
        if (results.size() != 1) {
            throw new IllegalStateException(method + ": expected one result, got " + results.size());
        }
        return results.iterator().next().getPrimaryResult().getScore();
    }

    private static double[] ratios(double[] num, double[] den) {
        double[] r = new double[num.length];
        for (int i = 0; i < num.length; i++) {
            r[i] = num[i] / den[i];
        }
        return r;
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /** A JSON number with 6 significant digits (the batch rows' ratios are near 0.01). */
    private static String num(double x) {
        return new BigDecimal(x).round(new MathContext(6)).stripTrailingZeros().toPlainString();
    }

    private static String fmt(double[] xs) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < xs.length; i++) {
            b.append(i == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.4g", xs[i]));
        }
        return b.append("]").toString();
    }
}
