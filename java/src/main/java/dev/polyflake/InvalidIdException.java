package dev.polyflake;

/**
 * A value is not a valid ID: negative, at least 2^63, or not plain decimal digits.
 *
 * <p>The core's error kind InvalidId: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class InvalidIdException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    InvalidIdException(String encoded) {
        super(encoded);
    }

    /**
     * The value as given (decimal text, or the number).
     *
     * @return the core's field input
     */
    public String input() {
        return (String) field("input");
    }

    /**
     * Why it was rejected.
     *
     * @return the core's field reason
     */
    public String reason() {
        return (String) field("reason");
    }
}
