package dev.polyflake;

/**
 * The node id does not fit the layout's node field (or is negative).
 *
 * <p>The core's error kind InvalidNodeId: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class InvalidNodeIdException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    InvalidNodeIdException(String encoded) {
        super(encoded);
    }

    /**
     * The node id given (wide enough to carry any value a binding receives).
     *
     * @return the core's field node_id
     */
    public java.math.BigInteger nodeId() {
        return Fields.big(field("node_id"));
    }

    /**
     * The largest node id the layout allows.
     *
     * @return the core's field max
     */
    public long max() {
        return ((Number) field("max")).longValue();
    }
}
