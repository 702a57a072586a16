package dev.polyflake;

import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * How a call that must wait waits without holding its thread in native code: the core's
 * non-waiting call says "not now" (a small rewind, a spent millisecond), and the caller parks
 * here, in Java, so a virtual thread unmounts, then asks again. It keeps parking while the wall
 * clock moves past the furthest millisecond it has seen (other threads may be taking each new
 * millisecond's IDs first: that is progress, not a fault). Once the clock has not moved past it
 * for the generator's wait budget (a clock behind, stuck or retreating), the last attempt is the
 * core's waiting call, whose deadline and refusal are the core's. A restart guard (a lease's, or
 * a fixed node id's mark after its previous holder crashed) is waited out the same way: the
 * clock moves while it holds, so the call keeps parking until the core issues, or refuses a
 * guard further off than a call waits for. Nothing here decides what is issued or refused.
 */
final class Waits {
    /** One park: a fraction of a millisecond, the unit every wait is counted in. */
    static final long SLICE_NANOS = 200_000L;

    /** Parks taken, process-wide (the virtual-thread test reads it). */
    static final LongAdder PARKS = new LongAdder();
    /** Calls handed to the core's waiting call after parking for the budget. */
    static final LongAdder HANDOVERS = new LongAdder();

    private Waits() {}

    /** A call's attempt without waiting: true when it issued. */
    interface Attempt {
        boolean tryOnce();
    }

    /** Whether a restart guard holds the generator now (asked without waiting). */
    interface Guard {
        boolean holds();
    }

    /** No guard to ask. */
    private static final Guard NONE = () -> false;

    /**
     * Park and retry {@code attempt} until it issues, or until the wall clock has not moved past
     * its furthest reading for {@code budgetNanos}; then false (the caller makes the core's
     * waiting call). An interrupted thread does not park (it could not), so it goes to the
     * core's call at once, told so: it issues what needs no wait, or refuses with
     * {@link InterruptedException}, never sleeping in native code.
     */
    static boolean parkUntil(Attempt attempt, long budgetNanos) {
        return parkUntil(attempt, budgetNanos, Long.MAX_VALUE, NONE);
    }

    /**
     * As {@link #parkUntil(Attempt, long)}, but also false once the clock has moved
     * {@code spanMs} past its first reading: a batch that did not fit a whole fresh millisecond
     * spans several, and the core's waiting call fills it. Not while {@code guard} holds: a
     * batch waiting for a restart guard (seconds, after a crash) keeps parking rather than
     * sleeping in the core's call, and spans its milliseconds from when the guard lets go.
     */
    static boolean parkUntil(Attempt attempt, long budgetNanos, long spanMs, Guard guard) {
        long start = System.nanoTime();
        long first = System.currentTimeMillis();
        long furthest = first;
        while (!Thread.currentThread().isInterrupted()) {
            LockSupport.parkNanos(SLICE_NANOS);
            PARKS.increment();
            if (attempt.tryOnce()) {
                return true;
            }
            // The elapsed time first, the clock after it: a clock that reads no further than
            // before was still over the whole of [start, elapsed]. A budget starts again from a
            // fresh reading taken after the clock was seen to move, never from the one before it:
            // a thread descheduled between the two reads would otherwise count its time off the
            // CPU as time the clock stood still (seen under load: a call handed to the core's
            // native wait after one preemption).
            long elapsed = System.nanoTime();
            long now = System.currentTimeMillis();
            if (now - first >= spanMs) {
                if (!guard.holds()) {
                    break;
                }
                first = now;
                furthest = now;
                start = System.nanoTime();
            } else if (now > furthest) {
                furthest = now;
                start = System.nanoTime();
            } else if (elapsed - start >= budgetNanos) {
                break;
            }
        }
        HANDOVERS.increment();
        return false;
    }

    /** A wait budget in ms as the park budget in ns. */
    static long budgetNanos(double maxWaitMs) {
        return (long) (maxWaitMs * 1_000_000.0);
    }
}
