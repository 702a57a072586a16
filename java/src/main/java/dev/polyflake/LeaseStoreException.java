package dev.polyflake;

/**
 * The lease store failed: an I/O error on the lease directory, an etcd or ZooKeeper error or timeout, credentials or certificates refused.
 *
 * <p>The core's error kind LeaseStore: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class LeaseStoreException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    LeaseStoreException(String encoded) {
        super(encoded);
    }

    /**
     * What failed, naming the store.
     *
     * @return the core's field reason
     */
    public String reason() {
        return (String) field("reason");
    }
}
