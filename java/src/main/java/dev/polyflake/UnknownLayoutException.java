package dev.polyflake;

/**
 * A layout name that is not one of the presets and not T/N/S.
 *
 * <p>The core's error kind UnknownLayout: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class UnknownLayoutException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    UnknownLayoutException(String encoded) {
        super(encoded);
    }

    /**
     * The name given.
     *
     * @return the core's field name
     */
    public String name() {
        return (String) field("name");
    }
}
