package dev.polyflake;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The settings every generator kind shares (Snowflake, UUIDv7, ULID). Unset settings keep the
 * core's defaults; every range is checked by the core when {@code build()} runs.
 *
 * @param <B> the concrete builder
 */
public abstract class GeneratorBuilder<B extends GeneratorBuilder<B>> {
    /** Options as key, value pairs for the native library (last one set wins). */
    final List<String> options = new ArrayList<>();
    TestClock clock;

    GeneratorBuilder() {}

    @SuppressWarnings("unchecked")
    final B set(String key, Object value) {
        options.add(key);
        options.add(String.valueOf(value));
        return (B) this;
    }

    static <T> T notNull(T value, String what) {
        return Objects.requireNonNull(value, () -> what + " is null");
    }

    final String wire() {
        return String.join(Fields.SEP, options);
    }

    final long clockHandle() {
        return clock == null ? 0 : clock.handle;
    }

    /**
     * Strict (the default) or monotonic.
     *
     * @param mode the mode
     * @return this builder
     */
    public B mode(Mode mode) {
        return set("mode", notNull(mode, "mode(mode): mode").coreName());
    }

    /**
     * Strict mode's wait budget in ms (the core's default 5.0; 0 to 60,000): a rewind up to it
     * is waited out, a larger one refused.
     *
     * @param ms the budget
     * @return this builder
     */
    public B maxWaitMs(double ms) {
        return set("max_wait_ms", ms);
    }

    /**
     * Monotonic mode's limit on running ahead of the wall clock, in ms (the core's default
     * 5,000): past it, calls are refused with {@link LeadLimitExceededException} and health
     * reports unhealthy. A successor of a monotonic holder on the same node id waits for its
     * lead, so the limit also bounds that wait.
     *
     * @param ms the limit, 0 or more
     * @return this builder
     */
    public B maxLeadMs(long ms) {
        return set("max_lead_ms", ms);
    }

    /**
     * Let monotonic mode run ahead of the wall clock without a limit.
     *
     * @return this builder
     */
    public B noLeadLimit() {
        return set("max_lead_ms", "off");
    }

    /**
     * Refuse to issue ({@link ClockUnsynchronizedException}, health status
     * {@code clock_unsynchronized}) while the kernel says the system clock is not synchronized
     * or its maximum error exceeds this many ms (default: none, the kernel's word is reported in
     * {@link Health#clockSync()} only). Checked once a second off the hot path; 1 to 16,000;
     * refused with a test clock.
     *
     * @param ms the bound on the kernel's maximum error
     * @return this builder
     */
    public B maxClockErrorMs(long ms) {
        return set("max_clock_error_ms", ms);
    }

    /**
     * The bound on a forward clock step, in ms (the core's default 60,000).
     *
     * @param ms the bound
     * @return this builder
     */
    public B maxForwardStepMs(long ms) {
        return set("max_forward_step_ms", ms);
    }

    /**
     * Turn the forward-step check off.
     *
     * @return this builder
     */
    public B noForwardStepCheck() {
        return set("max_forward_step_ms", "off");
    }

    /**
     * How long a stepped-ahead clock must hold its offset before it is believed, in ms (the
     * core's default 300,000).
     *
     * @param ms the time
     * @return this builder
     */
    public B forwardConfirmMs(long ms) {
        return set("forward_confirm_ms", ms);
    }

    /**
     * The precise (default) or the coarse clock reading.
     *
     * @param source the source
     * @return this builder
     */
    public B clockSource(ClockSource source) {
        return set("clock_source", notNull(source, "clockSource(source): source").coreName());
    }

    /**
     * Read time from a test clock instead of the system clock.
     *
     * @param clock a {@link ManualClock} or {@link ScriptedClock}
     * @return this builder
     */
    @SuppressWarnings("unchecked")
    public B clock(TestClock clock) {
        this.clock = notNull(clock, "clock(clock): clock");
        return (B) this;
    }
}
