package dev.polyflake;

/**
 * The epoch is negative, lies in the future of the system clock, or leaves the system clock outside the layout's window.
 *
 * <p>The core's error kind InvalidEpoch: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class InvalidEpochException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    InvalidEpochException(String encoded) {
        super(encoded);
    }

    /**
     * The epoch given, Unix milliseconds.
     *
     * @return the core's field epoch_ms
     */
    public long epochMs() {
        return ((Number) field("epoch_ms")).longValue();
    }

    /**
     * The system wall clock when it was checked, Unix milliseconds.
     *
     * @return the core's field now_ms
     */
    public long nowMs() {
        return ((Number) field("now_ms")).longValue();
    }

    /**
     * Which of the three it is.
     *
     * @return the core's field reason
     */
    public String reason() {
        return (String) field("reason");
    }
}
