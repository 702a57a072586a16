package dev.polyflake;

/**
 * The holder's next ID would pass its high-water mark R: because R was not renewed (the store is unreachable or refuses the write: cause has its words), or because a monotonic generator runs further ahead of its clock than the reserve. It never issues past R.
 *
 * <p>The core's error kind LeaseExpired: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class LeaseExpiredException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    LeaseExpiredException(String encoded) {
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
     * The high-water mark R, Unix milliseconds.
     *
     * @return the core's field high_water_ms
     */
    public long highWaterMs() {
        return ((Number) field("high_water_ms")).longValue();
    }

    /**
     * What stopped it, in words (and which setting to change, where one would help).
     *
     * @return the core's field cause
     */
    public String cause() {
        return (String) field("cause");
    }
}
