package dev.polyflake;

import java.util.Optional;
import java.util.UUID;

/**
 * A {@link TimeIdGenerator} of UUIDv7s (RFC 9562), as {@code java.util.UUID}s:
 * {@code new Uuid7Generator()} is strict on the system clock; {@link #builder()} gives the rest.
 */
public final class Uuid7Generator extends TimeIdGenerator {
    /** A strict generator on the system clock. */
    public Uuid7Generator() {
        this(builder());
    }

    private Uuid7Generator(Builder b) {
        super(Format.UUID7, b);
    }

    /** @return a builder with the core's defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * One UUIDv7, increasing.
     *
     * @return the UUID
     */
    public UUID nextUuid() {
        long[] out = new long[2];
        next(out);
        return new UUID(out[0], out[1]);
    }

    /** @return one UUIDv7 if it needs no wait, else empty */
    public Optional<UUID> tryNextUuid() {
        long[] out = new long[2];
        return tryNext(out) ? Optional.of(new UUID(out[0], out[1])) : Optional.empty();
    }

    /**
     * The Unix ms of a UUIDv7 (the core checks its version and variant).
     *
     * @param uuid a UUIDv7
     * @return its millisecond
     * @throws InvalidIdException if it is not a UUIDv7
     */
    public static long timestampMs(UUID uuid) {
        GeneratorBuilder.notNull(uuid, "timestampMs(uuid): uuid");
        return timestampMs(Format.UUID7, uuid.getMostSignificantBits(), uuid.getLeastSignificantBits());
    }

    /**
     * A UUID's text as the core reads it: the hyphenated 36-character form only, any case
     * (stricter than {@code UUID.fromString}).
     *
     * @param text the text
     * @return the UUID
     * @throws InvalidIdException for any other text
     */
    public static UUID parse(String text) {
        long[] v = parse(Format.UUID7, GeneratorBuilder.notNull(text, "parse(text): text"));
        return new UUID(v[0], v[1]);
    }

    /** The settings of a {@link Uuid7Generator}. */
    public static final class Builder extends GeneratorBuilder<Builder> {
        Builder() {}

        /** @return the generator (the core checks every setting) */
        public Uuid7Generator build() {
            return new Uuid7Generator(this);
        }
    }
}
