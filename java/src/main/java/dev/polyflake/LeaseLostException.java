package dev.polyflake;

/**
 * The lease was lost (the etcd lease was revoked or expired, the ZooKeeper session expired, or the slot key or znode was deleted or changed hands): the generator stops at once and for good; make a new one.
 *
 * <p>The core's error kind LeaseLost: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class LeaseLostException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    LeaseLostException(String encoded) {
        super(encoded);
    }

    /**
     * The node id the lease held.
     *
     * @return the core's field node_id
     */
    public long nodeId() {
        return ((Number) field("node_id")).longValue();
    }

    /**
     * What was seen.
     *
     * @return the core's field reason
     */
    public String reason() {
        return (String) field("reason");
    }
}
