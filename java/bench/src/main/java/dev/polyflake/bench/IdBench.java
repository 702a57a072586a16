package dev.polyflake.bench;

import cn.hutool.core.lang.Snowflake;
import com.github.f4b6a3.uuid.UuidCreator;
import dev.polyflake.ClockSource;
import dev.polyflake.Layout;
import dev.polyflake.Polyflake;
import dev.polyflake.RestartGuard;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * Per-call cost of the Java binding beside {@code System.currentTimeMillis()}, Hutool's
 * {@code Snowflake#nextId} and uuid-creator's {@code UuidCreator.getTimeOrderedEpoch()}, all in
 * one JMH run (fork, warm-up and measurement counts come from the command line: .build/mk/java.mk's
 * {@code JMH_ARGS}, printed by {@code make bench-java}).
 *
 * <p>The 64-bit cases must not measure a spent millisecond: on the default layout (41/10/12,
 * which Hutool's 5+5 node bits and 12 sequence bits share) one generator issues at most 4,096
 * IDs per ms, and a tight loop at tens of ns per call asks for more, so both sides would then
 * time their wait for the next millisecond (about 244 ns per ID), not the call. So each side
 * gets {@value #POOL} generators (distinct node ids) taken round-robin, the same indexing for
 * both: each generator sees 1/{@value #POOL} of the calls, far below 4,096 per ms at any speed
 * this machine reaches (64 x 4,096 IDs per ms is one call per 3.8 ns). The batch and 8-thread
 * cases use one generator on a layout with more sequence bits instead, and the single-generator
 * strict cases (the ones {@link Check} times for {@code make bench-check-java}) layout 41/1/21
 * (2,097,152 IDs per ms). Monotonic mode never waits for a millisecond: its cases take one
 * generator on the default layout, with no lead limit (a loop on one generator runs ahead of the
 * wall clock, past the default 5,000 ms limit within seconds, and would then be refused).
 *
 * <p>Every generator here has a static node id with its restart guard off (see {@link #builder}):
 * no mark on the host, so the benchmark leaves nothing in the lease directory and a monotonic
 * generator's lead is not bounded by a mark's reserve.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class IdBench {
    /** Generators per round-robin pool (a power of two: the index is masked). */
    static final int POOL = 64;

    /** Batch size of the batch cases. */
    static final int BATCH = 4096;

    /** The host scope when {@code POLYFLAKE_HOST_SCOPE} names none (.build/mk/java.mk sets one per run). */
    static final String DEFAULT_SCOPE = "bench-java";

    /**
     * A builder for a benchmark generator: static node id, restart guard off (no mark kept in
     * the state directory), and a host scope of the benchmark's own (the environment's
     * {@code POLYFLAKE_HOST_SCOPE}, else {@value #DEFAULT_SCOPE}), so a test suite running
     * beside it keeps its own node ids.
     */
    static dev.polyflake.Snowflake.Builder builder(long nodeId) {
        dev.polyflake.Snowflake.Builder b =
            dev.polyflake.Snowflake.builder().nodeId(nodeId).restartGuard(RestartGuard.OFF);
        String scope = System.getenv("POLYFLAKE_HOST_SCOPE");
        return scope == null || scope.isEmpty() ? b.hostScope(DEFAULT_SCOPE) : b;
    }

    /** Refuse a generator that did not get the clock asked for (the core falls back where coarse is too coarse). */
    static dev.polyflake.Snowflake checked(dev.polyflake.Snowflake g, ClockSource source) {
        if (g.clockSource() != source) {
            throw new IllegalStateException("asked for the " + source + " clock, got " + g.clockSource());
        }
        return g;
    }

    /** 64 Hutool generators (worker id 0 to 31, data center 0 and 1), taken in turn. */
    @State(Scope.Thread)
    public static class HutoolPool {
        final Snowflake[] gens = new Snowflake[POOL];
        int next;

        @Setup(Level.Trial)
        public void setup() {
            for (int i = 0; i < POOL; i++) {
                gens[i] = new Snowflake(i % 32, i / 32);
            }
        }
    }

    /** 64 polyflake generators, strict, default layout, node ids {@code base} to base + 63. */
    abstract static class PolyflakePool {
        final dev.polyflake.Snowflake[] gens = new dev.polyflake.Snowflake[POOL];
        int next;

        void open(long base, ClockSource source) {
            for (int i = 0; i < POOL; i++) {
                gens[i] = checked(builder(base + i).clockSource(source).build(), source);
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            for (dev.polyflake.Snowflake g : gens) {
                g.close();
            }
        }
    }

    /** The precise clock (the default). */
    @State(Scope.Thread)
    public static class StrictPool extends PolyflakePool {
        @Setup(Level.Trial)
        public void setup() {
            open(0, ClockSource.PRECISE);
        }
    }

    /** The coarse clock ({@code CLOCK_REALTIME_COARSE}; refused here if the core falls back). */
    @State(Scope.Thread)
    public static class CoarsePool extends PolyflakePool {
        @Setup(Level.Trial)
        public void setup() {
            open(POOL, ClockSource.COARSE);
        }
    }

    /** One generator, {@link #open}ed by each case's state, closed after the trial. */
    abstract static class One {
        dev.polyflake.Snowflake gen;

        void open(dev.polyflake.Snowflake.Builder b, ClockSource source) {
            gen = checked(b.clockSource(source).build(), source);
        }

        @TearDown(Level.Trial)
        public void close() {
            gen.close();
        }
    }

    /** Strict, precise clock, layout 41/1/21 (2,097,152 IDs per ms: a loop never waits), node id 0. */
    @State(Scope.Thread)
    public static class OneStrict extends One {
        @Setup(Level.Trial)
        public void setup() {
            open(builder(0).layout(Layout.of(41, 1, 21)), ClockSource.PRECISE);
        }
    }

    /** Strict, coarse clock, layout 41/1/21, node id 1. */
    @State(Scope.Thread)
    public static class OneStrictCoarse extends One {
        @Setup(Level.Trial)
        public void setup() {
            open(builder(1).layout(Layout.of(41, 1, 21)), ClockSource.COARSE);
        }
    }

    /** Monotonic, precise clock, default layout 41/10/12, no lead limit, node id 1,000. */
    @State(Scope.Thread)
    public static class OneMonotonic extends One {
        @Setup(Level.Trial)
        public void setup() {
            open(builder(1000).mode(dev.polyflake.Mode.MONOTONIC).noLeadLimit(), ClockSource.PRECISE);
        }
    }

    /** Monotonic, coarse clock, default layout, no lead limit, node id 1,001. */
    @State(Scope.Thread)
    public static class OneMonotonicCoarse extends One {
        @Setup(Level.Trial)
        public void setup() {
            open(builder(1001).mode(dev.polyflake.Mode.MONOTONIC).noLeadLimit(), ClockSource.COARSE);
        }
    }

    /**
     * One strict generator that a tight loop cannot exhaust even in batches: layout 39/1/23
     * (8,388,608 IDs per ms; 39 bits of ms from the default 2024 epoch last until 2041).
     */
    @State(Scope.Thread)
    public static class Wide {
        dev.polyflake.Snowflake gen;
        final long[] buf = new long[BATCH];

        @Setup(Level.Trial)
        public void setup() {
            gen = builder(0).layout(Layout.of(39, 1, 23)).build();
        }

        @TearDown(Level.Trial)
        public void close() {
            gen.close();
        }
    }

    /** One strict generator shared by all threads of a case (layout 39/1/23, node id 1). */
    @State(Scope.Benchmark)
    public static class Shared {
        dev.polyflake.Snowflake gen;

        @Setup(Level.Trial)
        public void setup() {
            gen = builder(1).layout(Layout.of(39, 1, 23)).build();
        }

        @TearDown(Level.Trial)
        public void close() {
            gen.close();
        }
    }

    /** @return the reference: one clock read, the least a time-based ID costs */
    @Benchmark
    public long clockCurrentTimeMillis() {
        return System.currentTimeMillis();
    }

    /** @return Hutool 5.8 {@code Snowflake#nextId}, round-robin over 64 generators */
    @Benchmark
    public long hutoolNextId(HutoolPool p) {
        return p.gens[p.next++ & (POOL - 1)].nextId();
    }

    /** @return polyflake strict {@code nextId}, precise clock, round-robin over 64 generators */
    @Benchmark
    public long polyflakeStrictNextId(StrictPool p) {
        return p.gens[p.next++ & (POOL - 1)].nextId();
    }

    /** @return polyflake strict {@code nextId}, coarse clock, round-robin over 64 generators */
    @Benchmark
    public long polyflakeCoarseNextId(CoarsePool p) {
        return p.gens[p.next++ & (POOL - 1)].nextId();
    }

    /** @return polyflake strict {@code nextId} on one generator (41/1/21): no round-robin */
    @Benchmark
    public long polyflakeStrictNextIdOneGenerator(OneStrict g) {
        return g.gen.nextId();
    }

    /** @return polyflake strict {@code nextId}, coarse clock, on one generator (41/1/21) */
    @Benchmark
    public long polyflakeCoarseNextIdOneGenerator(OneStrictCoarse g) {
        return g.gen.nextId();
    }

    /** @return polyflake monotonic {@code nextId} on one generator (41/10/12, no lead limit) */
    @Benchmark
    public long polyflakeMonotonicNextId(OneMonotonic g) {
        return g.gen.nextId();
    }

    /** @return polyflake monotonic {@code nextId}, coarse clock, on one generator (41/10/12, no lead limit) */
    @Benchmark
    public long polyflakeMonotonicCoarseNextId(OneMonotonicCoarse g) {
        return g.gen.nextId();
    }

    /** @return {@code nextIds(4096)} (a new array per batch); the time is per ID */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long[] polyflakeNextIds4096(Wide w) {
        return w.gen.nextIds(BATCH);
    }

    /** @return {@code nextIds(buf)} into one reused array of 4,096; the time is per ID */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long[] polyflakeNextIdsIntoBuffer4096(Wide w) {
        w.gen.nextIds(w.buf);
        return w.buf;
    }

    /** @return the control for {@code nextIds(4096)}: a new {@code long[4096]} alone; the time is per element */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long[] jvmNewLongArray4096() {
        return new long[BATCH];
    }

    /** @return {@code Polyflake.uuid7()}: the process-wide strict UUIDv7 generator */
    @Benchmark
    public UUID polyflakeUuid7() {
        return Polyflake.uuid7();
    }

    /** @return {@code Polyflake.ulid()}: the process-wide strict ULID generator (a 26-character string) */
    @Benchmark
    public String polyflakeUlid() {
        return Polyflake.ulid();
    }

    /** @return uuid-creator's UUIDv7 */
    @Benchmark
    public UUID uuidCreatorTimeOrderedEpoch() {
        return UuidCreator.getTimeOrderedEpoch();
    }

    /** @return strict {@code nextId} from 8 platform threads on one generator (time per call per thread) */
    @Benchmark
    @Threads(8)
    public long polyflakeStrictNextId8Threads(Shared s) {
        return s.gen.nextId();
    }
}
