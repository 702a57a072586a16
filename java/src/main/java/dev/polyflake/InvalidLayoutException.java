package dev.polyflake;

/**
 * The three fields of a layout are not each at least 1 bit, the node or sequence field is over 32 bits, or the three do not add up to 63.
 *
 * <p>The core's error kind InvalidLayout: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class InvalidLayoutException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    InvalidLayoutException(String encoded) {
        super(encoded);
    }

    /**
     * Requested timestamp bits.
     *
     * @return the core's field timestamp_bits
     */
    public long timestampBits() {
        return ((Number) field("timestamp_bits")).longValue();
    }

    /**
     * Requested node bits.
     *
     * @return the core's field node_bits
     */
    public long nodeBits() {
        return ((Number) field("node_bits")).longValue();
    }

    /**
     * Requested sequence bits.
     *
     * @return the core's field sequence_bits
     */
    public long sequenceBits() {
        return ((Number) field("sequence_bits")).longValue();
    }
}
