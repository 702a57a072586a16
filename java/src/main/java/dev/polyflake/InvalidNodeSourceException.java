package dev.polyflake;

/**
 * A node-id source could not give a node id: an environment variable unset or not a number, a hostname without an ordinal, an IPv4 prefix too short for the node field, lease options out of range.
 *
 * <p>The core's error kind InvalidNodeSource: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class InvalidNodeSourceException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    InvalidNodeSourceException(String encoded) {
        super(encoded);
    }

    /**
     * What is wrong, naming the source.
     *
     * @return the core's field reason
     */
    public String reason() {
        return (String) field("reason");
    }
}
