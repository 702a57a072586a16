package dev.polyflake;

/**
 * The generator was closed: it issues nothing more (its node id, or its lease's slot, may already belong to another generator).
 *
 * <p>The core's error kind GeneratorClosed: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class GeneratorClosedException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    GeneratorClosedException(String encoded) {
        super(encoded);
    }

    /**
     * The generator's node id.
     *
     * @return the core's field node_id
     */
    public long nodeId() {
        return ((Number) field("node_id")).longValue();
    }
}
