package dev.polyflake;

/**
 * The kernel says the clock is not synchronized, or its error exceeds max_clock_error_ms: nothing is issued until it says otherwise.
 *
 * <p>The core's error kind ClockUnsynchronized: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class ClockUnsynchronizedException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    ClockUnsynchronizedException(String encoded) {
        super(encoded);
    }

    /**
     * The generator's node id (0 for the 128-bit formats).
     *
     * @return the core's field node_id
     */
    public long nodeId() {
        return ((Number) field("node_id")).longValue();
    }

    /**
     * The kernel's maximum error of the clock when last read, in microseconds.
     *
     * @return the core's field max_error_us
     */
    public long maxErrorUs() {
        return ((Number) field("max_error_us")).longValue();
    }

    /**
     * Why, in words (the kernel's state, the bound, what to do).
     *
     * @return the core's field cause
     */
    public String cause() {
        return (String) field("cause");
    }
}
