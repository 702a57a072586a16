package dev.polyflake;

/**
 * Another live generator already uses this static node id with the same epoch and layout on the system clock: in this process (share that one), or in another process on this host (give each process its own node id, or use a lease).
 *
 * <p>The core's error kind NodeIdInUse: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class NodeIdInUseException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    NodeIdInUseException(String encoded) {
        super(encoded);
    }

    /**
     * The node id asked for.
     *
     * @return the core's field node_id
     */
    public long nodeId() {
        return ((Number) field("node_id")).longValue();
    }

    /**
     * The holding process when it is another one on this host (its pid when the host could tell it, else 0); None when the holder is in this process.
     *
     * @return the core's field holder_pid
     */
    public Long holderPid() {
        return Fields.optLong(field("holder_pid"));
    }
}
