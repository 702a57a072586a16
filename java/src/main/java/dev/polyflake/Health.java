package dev.polyflake;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A generator's health snapshot, as the core takes it: ok or not and why, the clocks, the
 * counters and the lease. {@link #fields()} holds every field by the core's name; the accessors
 * read the same fields.
 */
public final class Health {
    private final Map<String, Object> fields;

    Health(String encoded) {
        this.fields = Fields.parse(encoded);
    }

    /** @return every field by the core's name, in its order (unmodifiable) */
    public Map<String, Object> fields() {
        return fields;
    }

    /**
     * One field by the core's name.
     *
     * @param name such as {@code ids_issued}
     * @return its value (Long, Double, Boolean, String, a nested Map, or null)
     */
    public Object get(String name) {
        return fields.get(name);
    }

    private long num(String name) {
        return ((Number) fields.get(name)).longValue();
    }

    /** @return true when the generator can issue now */
    public boolean ok() {
        return (Boolean) fields.get("ok");
    }

    /** @return why it is or is not healthy: the core's status name ({@code ok}, {@code clock_behind}, ...) */
    public String status() {
        return (String) fields.get("status");
    }

    /** @return a human-readable reason, empty when ok */
    public String reason() {
        return (String) fields.get("reason");
    }

    /** @return the node id */
    public long nodeId() {
        return num("node_id");
    }

    /** @return where the node id came from ({@code static}, {@code file_lease}, ...) */
    public String source() {
        return (String) fields.get("source");
    }

    /** @return the mode */
    public Mode mode() {
        return Mode.fromCore((String) fields.get("mode"));
    }

    /** @return the Unix ms of the last issued ID, if any */
    public OptionalLong lastIssuedMs() {
        Object v = fields.get("last_issued_ms");
        return v == null ? OptionalLong.empty() : OptionalLong.of(((Number) v).longValue());
    }

    /** @return the wall clock when the snapshot was taken, Unix ms */
    public long wallMs() {
        return num("wall_ms");
    }

    /** @return how far the last issued ms is ahead of the wall clock */
    public long leadMs() {
        return num("lead_ms");
    }

    /** @return IDs issued */
    public long idsIssued() {
        return num("ids_issued");
    }

    /** @return calls that waited out a small rewind */
    public long rewindsWaited() {
        return num("rewinds_waited");
    }

    /** @return calls refused because the clock was behind or stuck */
    public long rewindsRefused() {
        return num("rewinds_refused");
    }

    /** @return times a strict call found the millisecond's sequence spent and waited in the core */
    public long sequenceExhaustions() {
        return num("sequence_exhaustions");
    }

    /** @return sleeps taken in the core while waiting */
    public long waitSleeps() {
        return num("wait_sleeps");
    }

    /** @return milliseconds a monotonic generator borrowed ahead of the clock */
    public long msBorrowed() {
        return num("ms_borrowed");
    }

    /** @return monotonic calls refused by {@code maxLeadMs} */
    public long leadRefused() {
        return num("lead_refused");
    }

    /** @return lease renewals */
    public long leaseRenewals() {
        return num("lease_renewals");
    }

    /** @return failed lease renewals */
    public long leaseFailures() {
        return num("lease_failures");
    }

    /** @return how far the clock reads ahead of what elapsed time vouches for, while not believed */
    public long clockAheadMs() {
        return num("clock_ahead_ms");
    }

    /** @return strict calls refused because the clock stepped ahead */
    public long forwardRefused() {
        return num("forward_refused");
    }

    /** @return the clock reading in use */
    public ClockSource clockSource() {
        return ClockSource.fromCore((String) fields.get("clock_source"));
    }

    /** @return the resolution of the system clock in use, ns (0 for an injected clock) */
    public long clockTickNs() {
        return num("clock_tick_ns");
    }

    /** @return why a requested coarse source is not in use, empty otherwise */
    public String clockNote() {
        return (String) fields.get("clock_note");
    }

    /**
     * The lease's state (slot, high-water mark, restart guard, phase, ...), by the core's names.
     *
     * @return the lease's fields, or empty when the node id is not leased
     */
    @SuppressWarnings("unchecked")
    public Optional<Map<String, Object>> lease() {
        return Optional.ofNullable((Map<String, Object>) fields.get("lease"));
    }

    @Override
    public String toString() {
        return "Health" + fields;
    }
}
