package dev.polyflake;

import java.lang.ref.Reference;

/** What {@link Uuid7Generator} and {@link UlidGenerator} share: a core handle, waits parked in Java. */
abstract class TimeIdGenerator implements AutoCloseable {
    static final int UUID7 = 0;
    static final int ULID = 1;

    final long handle;
    private final long parkBudgetNanos;
    private final boolean injectedClock;

    TimeIdGenerator(int kind, GeneratorBuilder<?> b) {
        Native.ensureLoaded();
        this.handle = Native.timeIdNew(kind, b.wire(), b.clockHandle());
        // The core shares the test clock (its own reference): the Java handle need only live
        // through this call.
        Reference.reachabilityFence(b.clock);
        Native.CLEANER.register(this, new Free(handle));
        double budget = Native.timeIdWaitBudgetMs(handle);
        this.injectedClock = budget < 0;
        this.parkBudgetNanos = Waits.budgetNanos(Math.max(budget, 0));
    }

    private static final class Free implements Runnable {
        private final long handle;

        Free(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            Native.timeIdFree(handle);
        }
    }

    /** One ID into {@code out} = [high, low], parked while the core would wait. */
    final void next(long[] out) {
        try {
            if (injectedClock) {
                Native.timeIdNext(handle, out, true, Thread.currentThread().isInterrupted());
            } else if (!Native.timeIdNext(handle, out, false, false)
                && !Waits.parkUntil(() -> Native.timeIdNext(handle, out, false, false), parkBudgetNanos)) {
                Native.timeIdNext(handle, out, true, Thread.currentThread().isInterrupted());
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** One ID into {@code out} if it needs no wait. */
    final boolean tryNext(long[] out) {
        try {
            return Native.timeIdNext(handle, out, false, false);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** @return a health snapshot */
    public Health health() {
        try {
            return new Health(Native.timeIdHealth(handle));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Stop issuing for good; later calls throw {@link GeneratorClosedException}. */
    @Override
    public void close() {
        try {
            Native.timeIdClose(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }
}
