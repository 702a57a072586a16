package dev.polyflake;

/**
 * Strict mode: the wall clock is further ahead of the time elapsed since it was last trusted than max_forward_step_ms (a bad NTP server, a VM restored with a wrong clock). Issuing now would put IDs in the future that nothing remembers after the correction, so the call is refused until the clock comes back or the new offset has held for forward_confirm_ms.
 *
 * <p>The core's error kind ClockJumpedAhead: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class ClockJumpedAheadException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    ClockJumpedAheadException(String encoded) {
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
     * How far the reading is ahead of what elapsed time vouches for, in ms.
     *
     * @return the core's field ahead_ms
     */
    public long aheadMs() {
        return ((Number) field("ahead_ms")).longValue();
    }

    /**
     * The bound on a forward step, in ms.
     *
     * @return the core's field max_forward_step_ms
     */
    public long maxForwardStepMs() {
        return ((Number) field("max_forward_step_ms")).longValue();
    }

    /**
     * How much longer the new offset must hold before it is believed, in ms.
     *
     * @return the core's field confirm_remaining_ms
     */
    public long confirmRemainingMs() {
        return ((Number) field("confirm_remaining_ms")).longValue();
    }
}
