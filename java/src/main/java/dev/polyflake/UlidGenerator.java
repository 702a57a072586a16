package dev.polyflake;

import java.util.Optional;

/**
 * A generator of ULIDs (26 characters of Crockford base32, time first) over the core's clock
 * rules: {@code new UlidGenerator()} is strict on the system clock; {@link #builder()} gives the
 * rest. Waits park in Java, as {@link Snowflake}'s do.
 */
public final class UlidGenerator extends TimeIdGenerator {
    /** A strict generator on the system clock. */
    public UlidGenerator() {
        this(builder());
    }

    private UlidGenerator(Builder b) {
        super(ULID, b);
    }

    /** @return a builder with the core's defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * One ULID, increasing (as text and as a number).
     *
     * @return its canonical text
     */
    public String nextUlid() {
        long[] out = new long[2];
        next(out);
        return Native.ulidFormat(out[0], out[1]);
    }

    /** @return one ULID if it needs no wait, else empty */
    public Optional<String> tryNextUlid() {
        long[] out = new long[2];
        return tryNext(out) ? Optional.of(Native.ulidFormat(out[0], out[1])) : Optional.empty();
    }

    /**
     * The Unix ms of a ULID.
     *
     * @param ulid its text
     * @return its millisecond
     * @throws InvalidIdException if it is not a ULID
     */
    public static long timestampMs(String ulid) {
        GeneratorBuilder.notNull(ulid, "timestampMs(ulid): ulid");
        long[] v = parse(ulid);
        return Native.timeIdTimestampMs(ULID, v[0], v[1]);
    }

    /**
     * A ULID's 128 bits, [high, low], parsed by the core.
     *
     * @param ulid its text
     * @return the two halves
     */
    public static long[] parse(String ulid) {
        GeneratorBuilder.notNull(ulid, "parse(ulid): ulid");
        Native.ensureLoaded();
        long[] out = new long[2];
        Native.timeIdParse(ULID, ulid, out);
        return out;
    }

    /**
     * A ULID's canonical text (upper case, the aliases I, L, O read as 1, 1, 0).
     *
     * @param ulid its text
     * @return the canonical text
     */
    public static String canonical(String ulid) {
        long[] v = parse(ulid);
        return Native.ulidFormat(v[0], v[1]);
    }

    /** The settings of a {@link UlidGenerator}. */
    public static final class Builder extends GeneratorBuilder<Builder> {
        Builder() {}

        /** @return the generator (the core checks every setting) */
        public UlidGenerator build() {
            return new UlidGenerator(this);
        }
    }
}
