package dev.polyflake;

/**
 * A lease store already belongs to another ID space (epoch and layout): two generators of different spaces on one store could spell the same number with different node ids.
 *
 * <p>The core's error kind IdSpaceMismatch: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class IdSpaceMismatchException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    IdSpaceMismatchException(String encoded) {
        super(encoded);
    }

    /**
     * The lease directory, or the etcd endpoints and prefix.
     *
     * @return the core's field store
     */
    public String store() {
        return (String) field("store");
    }

    /**
     * The space recorded in the store.
     *
     * @return the core's field store_space
     */
    public String storeSpace() {
        return (String) field("store_space");
    }

    /**
     * This generator's space.
     *
     * @return the core's field our_space
     */
    public String ourSpace() {
        return (String) field("our_space");
    }
}
