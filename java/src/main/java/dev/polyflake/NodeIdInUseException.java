package dev.polyflake;

/**
 * Node id already held by a live generator with the same layout (any epoch), in this process or another on this host, by a static id or a lease: share it, give each process its own id, or use a lease.
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
     * The holding process when it is another one on this host (its pid when the host could tell it, else 0); null when the holder is a generator of this copy of the library.
     *
     * @return the core's field holder_pid
     */
    public Long holderPid() {
        return Fields.optLong(field("holder_pid"));
    }

    /**
     * The holding process in words ({@code process 4242 (billing) on this host}, or {@code this
     * process (...)} for another copy of the library in this JVM, such as one loaded by a second
     * class loader); empty when the holder is a generator of this copy of the library.
     *
     * @return the core's field holder
     */
    public String holder() {
        return (String) field("holder");
    }
}
