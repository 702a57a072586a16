package dev.polyflake;

/**
 * A monotonic generator would run further ahead of the wall clock than its max_lead_ms.
 *
 * <p>The core's error kind LeadLimitExceeded: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class LeadLimitExceededException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    LeadLimitExceededException(String encoded) {
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

    /**
     * How far ahead the ID would be, in milliseconds.
     *
     * @return the core's field lead_ms
     */
    public long leadMs() {
        return ((Number) field("lead_ms")).longValue();
    }

    /**
     * The configured limit.
     *
     * @return the core's field max_lead_ms
     */
    public long maxLeadMs() {
        return ((Number) field("max_lead_ms")).longValue();
    }
}
