package dev.polyflake;

import java.util.concurrent.locks.LockSupport;

/**
 * How a call that must wait waits without holding its thread in native code: the core's
 * non-waiting call says "not now" (a small rewind, a spent millisecond), and the caller parks
 * here, in Java, so a virtual thread unmounts from its carrier. After the generator's own wait
 * budget has gone by parked, the last attempt is the core's waiting call, whose deadline and
 * refusal are the core's: no rule about when to refuse lives here.
 */
final class Waits {
    /** One park: a fraction of a millisecond, the unit every wait is counted in. */
    static final long SLICE_NANOS = 200_000L;

    private Waits() {}

    /** A call's attempt without waiting: true when it issued. */
    interface Attempt {
        boolean tryOnce();
    }

    /**
     * Park and retry {@code attempt} until it issues or {@code budgetNanos} has gone by; then
     * false (the caller makes the core's waiting call). An interrupted thread does not park (it
     * could not), so it goes to the core's call at once.
     */
    static boolean parkUntil(Attempt attempt, long budgetNanos) {
        long start = System.nanoTime();
        while (System.nanoTime() - start < budgetNanos && !Thread.currentThread().isInterrupted()) {
            LockSupport.parkNanos(SLICE_NANOS);
            if (attempt.tryOnce()) {
                return true;
            }
        }
        return false;
    }

    /** A wait budget in ms as the park budget in ns. */
    static long budgetNanos(double maxWaitMs) {
        return (long) (maxWaitMs * 1_000_000.0);
    }
}
