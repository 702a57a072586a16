package dev.polyflake;

/**
 * The timestamp to issue lies outside the layout's window (before the epoch, or past its last millisecond). An ID outside the window is refused, never wrapped.
 *
 * <p>The core's error kind TimestampOverflow: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class TimestampOverflowException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    TimestampOverflowException(String encoded) {
        super(encoded);
    }

    /**
     * The timestamp that did not fit, Unix milliseconds.
     *
     * @return the core's field unix_ms
     */
    public long unixMs() {
        return ((Number) field("unix_ms")).longValue();
    }

    /**
     * The generator's epoch, Unix milliseconds.
     *
     * @return the core's field epoch_ms
     */
    public long epochMs() {
        return ((Number) field("epoch_ms")).longValue();
    }

    /**
     * The largest elapsed milliseconds the layout holds.
     *
     * @return the core's field max_elapsed_ms
     */
    public long maxElapsedMs() {
        return ((Number) field("max_elapsed_ms")).longValue();
    }
}
