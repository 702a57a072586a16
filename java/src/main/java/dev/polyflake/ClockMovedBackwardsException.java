package dev.polyflake;

/**
 * The wall clock is behind a millisecond this generator already issued from (or has not advanced while the sequence for the current millisecond is spent). Issuing now could repeat an ID, so the call is refused.
 *
 * <p>The core's error kind ClockMovedBackwards: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class ClockMovedBackwardsException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    ClockMovedBackwardsException(String encoded) {
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
     * How far the clock is behind the last issued millisecond (0 when it is stuck on it).
     *
     * @return the core's field behind_ms
     */
    public long behindMs() {
        return ((Number) field("behind_ms")).longValue();
    }

    /**
     * True when the clock did not advance past a spent millisecond within the budget.
     *
     * @return the core's field stuck
     */
    public boolean stuck() {
        return (Boolean) field("stuck");
    }

    /**
     * The wait budget in milliseconds that was used up or exceeded.
     *
     * @return the core's field max_wait_ms
     */
    public double maxWaitMs() {
        return ((Number) field("max_wait_ms")).doubleValue();
    }
}
