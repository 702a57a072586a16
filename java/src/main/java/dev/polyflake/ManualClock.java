package dev.polyflake;

import java.lang.ref.Reference;

/**
 * A clock the test moves: {@link #set(long)} and {@link #advance(long)} step the wall reading
 * (elapsed time does not move, as with an NTP step), {@link #elapse(long)} lets time pass (both
 * move). The core's {@code ManualClock}.
 */
public final class ManualClock extends TestClock {
    /**
     * A clock reading {@code startMs} (Unix ms).
     *
     * @param startMs the first reading
     */
    public ManualClock(long startMs) {
        super(make(startMs));
    }

    private static long make(long startMs) {
        Native.ensureLoaded();
        return Native.manualClockNew(startMs);
    }

    private long op(int op, long ms) {
        try {
            return Native.manualClockOp(handle, op, ms);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Step the wall reading to {@code ms}.
     *
     * @param ms the new reading, Unix ms
     */
    public void set(long ms) {
        op(0, ms);
    }

    /**
     * Step the wall reading by {@code deltaMs} (negative: back).
     *
     * @param deltaMs the step
     */
    public void advance(long deltaMs) {
        op(1, deltaMs);
    }

    /**
     * Let {@code ms} milliseconds pass (the wall and the elapsed-time readings both move).
     *
     * @param ms how long, at least 0
     * @throws InvalidArgumentException for a negative {@code ms}
     */
    public void elapse(long ms) {
        op(2, ms);
    }

    /**
     * Give the clock a coarse reading that lags by up to {@code tickMs} (its coarse tick).
     *
     * @param tickMs the tick in ms
     */
    public void setTickMs(long tickMs) {
        op(3, tickMs);
    }

    /** @return the wall reading, Unix ms */
    public long get() {
        return op(1, 0);
    }
}
