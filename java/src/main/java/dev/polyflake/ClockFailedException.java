package dev.polyflake;

/**
 * An injected clock failed to give a reading.
 *
 * <p>The core's error kind ClockFailed: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class ClockFailedException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    ClockFailedException(String encoded) {
        super(encoded);
    }

    /**
     * What the clock reported.
     *
     * @return the core's field reason
     */
    public String reason() {
        return (String) field("reason");
    }
}
