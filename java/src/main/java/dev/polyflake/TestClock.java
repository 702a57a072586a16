package dev.polyflake;

/**
 * A clock a test controls, handed to a builder's {@code clock(...)}: {@link ManualClock} or
 * {@link ScriptedClock}. A generator on one shares it; generators on injected clocks are
 * independent of each other and of the host-wide node id rule.
 */
public abstract class TestClock {
    final long handle;

    TestClock(long handle) {
        this.handle = handle;
        Native.CLEANER.register(this, new Free(handle));
    }

    private static final class Free implements Runnable {
        private final long handle;

        Free(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            Native.clockFree(handle);
        }
    }
}
