package dev.polyflake;

import java.lang.ref.Reference;
import java.util.Optional;

/**
 * A generator of 128-bit time-ordered IDs, UUIDv7 (RFC 9562) or ULID, over the core's clock
 * rules: {@code new TimeIdGenerator(Format.ULID)} is strict on the system clock;
 * {@link #builder(Format)} gives the rest. Waits park in Java, as {@link Snowflake}'s do. IDs
 * come as the format's canonical text; {@link Uuid7Generator} and {@link UlidGenerator} are this
 * class with their format fixed, and add the format's own types and names.
 */
public class TimeIdGenerator implements AutoCloseable {
    /** The two formats (in the core's order: the ordinal is the core's index). */
    public enum Format {
        /** UUID version 7 (RFC 9562): 36 lower-case characters with hyphens. */
        UUID7("uuid7"),
        /** ULID: 26 characters of Crockford's base32, upper case. */
        ULID("ulid");

        private final String coreName;

        Format(String coreName) {
            this.coreName = coreName;
        }

        /**
         * The core's name of the format.
         *
         * @return {@code "uuid7"} or {@code "ulid"}
         */
        public String coreName() {
            return coreName;
        }

        /**
         * An ID's canonical text in this format.
         *
         * @param high its first 64 bits
         * @param low its last 64 bits
         * @return the text the core writes
         */
        public String text(long high, long low) {
            Native.ensureLoaded();
            return Native.timeIdFormat(ordinal(), high, low);
        }
    }

    final long handle;
    private final Format format;
    private final long parkBudgetNanos;
    private final boolean injectedClock;

    /**
     * A strict generator of {@code format} on the system clock.
     *
     * @param format UUIDv7 or ULID
     */
    @SuppressWarnings("this-escape") // the Cleaner's action holds the handle only, never this
    public TimeIdGenerator(Format format) {
        this(format, new Builder(format));
    }

    @SuppressWarnings("this-escape")
    TimeIdGenerator(Format format, GeneratorBuilder<?> b) {
        this.format = GeneratorBuilder.notNull(format, "format");
        Native.ensureLoaded();
        this.handle = Native.timeIdNew(format.ordinal(), b.wire(), b.clockHandle());
        // The core shares the test clock (its own reference): the Java handle need only live
        // through this call.
        Reference.reachabilityFence(b.clock);
        Native.CLEANER.register(this, new Free(handle));
        double budget = Native.timeIdWaitBudgetMs(handle);
        this.injectedClock = budget < 0;
        this.parkBudgetNanos = Waits.budgetNanos(Math.max(budget, 0));
    }

    /**
     * The settings of a generator of {@code format}.
     *
     * @param format UUIDv7 or ULID
     * @return a builder with the core's defaults
     */
    public static Builder builder(Format format) {
        return new Builder(GeneratorBuilder.notNull(format, "builder(format): format"));
    }

    private static final class Free implements Runnable {
        private final long handle;

        Free(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            Native.timeIdFree(handle);
        }
    }

    /** @return the format this generator issues in */
    public final Format format() {
        return format;
    }

    /**
     * One ID, increasing (as text and as a number).
     *
     * @return its canonical text
     */
    public final String nextId() {
        long[] out = new long[2];
        next(out);
        return format.text(out[0], out[1]);
    }

    /** @return one ID's canonical text if it needs no wait, else empty */
    public final Optional<String> tryNextId() {
        long[] out = new long[2];
        return tryNext(out) ? Optional.of(format.text(out[0], out[1])) : Optional.empty();
    }

    /** One ID into {@code out} = [high, low], parked while the core would wait. */
    final void next(long[] out) {
        try {
            if (injectedClock) {
                Native.timeIdNext(handle, out, true, Thread.currentThread().isInterrupted());
            } else if (!Native.timeIdNext(handle, out, false, false)
                && !Waits.parkUntil(() -> Native.timeIdNext(handle, out, false, false), parkBudgetNanos)) {
                Native.timeIdNext(handle, out, true, Thread.currentThread().isInterrupted());
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** One ID into {@code out} if it needs no wait. */
    final boolean tryNext(long[] out) {
        try {
            return Native.timeIdNext(handle, out, false, false);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** @return a health snapshot */
    public Health health() {
        try {
            return new Health(Native.timeIdHealth(handle));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Stop issuing for good; later calls throw {@link GeneratorClosedException}. */
    @Override
    public void close() {
        try {
            Native.timeIdClose(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The 128 bits of {@code text} in {@code format}, [high, low], parsed by the core. */
    static long[] parse(Format format, String text) {
        Native.ensureLoaded();
        long[] out = new long[2];
        Native.timeIdParse(format.ordinal(), text, out);
        return out;
    }

    /** The Unix ms of an ID of {@code format} (the core checks a UUID's version). */
    static long timestampMs(Format format, long high, long low) {
        Native.ensureLoaded();
        return Native.timeIdTimestampMs(format.ordinal(), high, low);
    }

    /** The settings of a {@link TimeIdGenerator}. */
    public static final class Builder extends GeneratorBuilder<Builder> {
        private final Format format;

        Builder(Format format) {
            this.format = format;
        }

        /** @return the generator (the core checks every setting) */
        public TimeIdGenerator build() {
            return new TimeIdGenerator(format, this);
        }
    }
}
