package dev.polyflake;

/**
 * Every slot of a lease store is held by a live holder.
 *
 * <p>The core's error kind NoFreeSlot: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class NoFreeSlotException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    NoFreeSlotException(String encoded) {
        super(encoded);
    }

    /**
     * The lease directory, or the etcd endpoints and key prefix.
     *
     * @return the core's field dir_or_prefix
     */
    public String dirOrPrefix() {
        return (String) field("dir_or_prefix");
    }

    /**
     * How many slots the store was asked to use.
     *
     * @return the core's field slots
     */
    public long slots() {
        return ((Number) field("slots")).longValue();
    }
}
