package dev.polyflake;

import java.util.Optional;

/**
 * A {@link TimeIdGenerator} of ULIDs (26 characters of Crockford base32, time first):
 * {@code new UlidGenerator()} is strict on the system clock; {@link #builder()} gives the rest.
 */
public final class UlidGenerator extends TimeIdGenerator {
    /** A strict generator on the system clock. */
    public UlidGenerator() {
        this(builder());
    }

    private UlidGenerator(Builder b) {
        super(Format.ULID, b);
    }

    /** @return a builder with the core's defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * One ULID, increasing (as text and as a number): {@link #nextId()}.
     *
     * @return its canonical text
     */
    public String nextUlid() {
        return nextId();
    }

    /** @return one ULID if it needs no wait, else empty: {@link #tryNextId()} */
    public Optional<String> tryNextUlid() {
        return tryNextId();
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
        return timestampMs(Format.ULID, v[0], v[1]);
    }

    /**
     * A ULID's 128 bits, [high, low], parsed by the core.
     *
     * @param ulid its text
     * @return the two halves
     */
    public static long[] parse(String ulid) {
        return parse(Format.ULID, GeneratorBuilder.notNull(ulid, "parse(ulid): ulid"));
    }

    /**
     * A ULID's canonical text (upper case, the aliases I, L, O read as 1, 1, 0).
     *
     * @param ulid its text
     * @return the canonical text
     */
    public static String canonical(String ulid) {
        long[] v = parse(ulid);
        return Format.ULID.text(v[0], v[1]);
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
