package dev.polyflake;

/**
 * The restart guard: the slot's previous holder may have issued up to its high-water mark R, and this holder's clock has not passed R yet (or has stepped back under it after passing it: cause says which). Nothing is issued until it has.
 *
 * <p>The core's error kind LeaseNotReady: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class LeaseNotReadyException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    LeaseNotReadyException(String encoded) {
        super(encoded);
    }

    /**
     * The leased node id.
     *
     * @return the core's field node_id
     */
    public long nodeId() {
        return ((Number) field("node_id")).longValue();
    }

    /**
     * How long until the wall clock passes R, in milliseconds.
     *
     * @return the core's field remaining_ms
     */
    public long remainingMs() {
        return ((Number) field("remaining_ms")).longValue();
    }

    /**
     * Why the clock is under the guard, in words.
     *
     * @return the core's field cause
     */
    public String cause() {
        return (String) field("cause");
    }
}
