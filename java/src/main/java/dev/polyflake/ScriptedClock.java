package dev.polyflake;

import java.util.Objects;

/**
 * A clock that returns the given readings in order, then ticks forward 1 ms per read (the
 * core's {@code ScriptedClock}).
 */
public final class ScriptedClock extends TestClock {
    /**
     * A clock reading {@code values} in order.
     *
     * @param values the readings, Unix ms
     */
    public ScriptedClock(long... values) {
        super(make(Objects.requireNonNull(values, "ScriptedClock(values): values is null")));
    }

    private static long make(long[] values) {
        Native.ensureLoaded();
        return Native.scriptedClockNew(values.clone());
    }
}
