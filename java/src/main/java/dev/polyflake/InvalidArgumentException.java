package dev.polyflake;

/**
 * A numeric setting or argument is out of range (a wait budget, a batch count, ...).
 *
 * <p>The core's error kind InvalidArgument: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class InvalidArgumentException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    InvalidArgumentException(String encoded) {
        super(encoded);
    }

    /**
     * The argument's name.
     *
     * @return the core's field name
     */
    public String name() {
        return (String) field("name");
    }

    /**
     * What is wrong with it.
     *
     * @return the core's field reason
     */
    public String reason() {
        return (String) field("reason");
    }
}
