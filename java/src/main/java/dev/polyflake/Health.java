package dev.polyflake;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A generator's health snapshot, as the core takes it: ok or not and why, the clocks (the
 * kernel's word on the system clock included), the counters and the lease or mark. {@link #fields()} holds every field by the core's name; the accessors
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

    /**
     * @return why it is or is not healthy: the core's status name ({@code ok}, {@code clock_behind},
     *     {@code restart_guard}, {@code clock_unsynchronized}, ...)
     */
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

    /** @return calls that waited for a fixed node id's restart guard in the core (a wait parked in Java is not counted) */
    public long restartWaits() {
        return num("restart_waits");
    }

    /**
     * Why a fixed node id on the system clock keeps no mark on this host (the state directory
     * cannot be written, or {@link RestartGuard#OFF}): then a successor after a clock stepped
     * back could repeat its IDs.
     *
     * @return the note, empty when it keeps one (and for leases and test clocks)
     */
    public String restartGuardNote() {
        return (String) fields.get("restart_guard_note");
    }

    /**
     * The kernel's word on the system clock when the snapshot was taken ({@code adjtimex}), by
     * the core's names: {@code state} ({@code ok}, {@code insert_leap}, {@code delete_leap},
     * {@code leap_in_progress}, {@code leap_done}, {@code unsynchronized}, {@code unavailable}),
     * {@code synchronized} (Boolean), {@code max_error_us} and {@code est_error_us} (Long, -1
     * when unavailable).
     *
     * @return the four fields (unmodifiable)
     */
    @SuppressWarnings("unchecked")
    public Map<String, Object> clockSync() {
        return (Map<String, Object>) fields.get("clock_sync");
    }

    /**
     * The lease's state (kind, slot, high-water mark, restart guard, phase, ...), by the core's
     * names; for a fixed node id that keeps a mark on the host, the mark's (kind {@code host},
     * {@code store} the mark's path).
     *
     * @return the lease's or the mark's fields, or empty when there is neither
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
