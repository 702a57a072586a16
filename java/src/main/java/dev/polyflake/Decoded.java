package dev.polyflake;

import java.time.Instant;

/**
 * An ID taken apart by the core: its millisecond (Unix), node id and sequence. The timestamp is
 * an upper bound on when the ID was made (a monotonic generator may run ahead of the clock).
 */
public final class Decoded {
    private final long timestampMs;
    private final long nodeId;
    private final long sequence;

    Decoded(long[] parts) {
        this.timestampMs = parts[0];
        this.nodeId = parts[1];
        this.sequence = parts[2];
    }

    /** @return the ID's millisecond, Unix ms */
    public long timestampMs() {
        return timestampMs;
    }

    /** @return the node that made it */
    public long nodeId() {
        return nodeId;
    }

    /** @return its position within that node's millisecond */
    public long sequence() {
        return sequence;
    }

    /** @return the ID's millisecond as an {@code Instant} */
    public Instant instant() {
        return Instant.ofEpochMilli(timestampMs);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Decoded)) {
            return false;
        }
        Decoded d = (Decoded) o;
        return d.timestampMs == timestampMs && d.nodeId == nodeId && d.sequence == sequence;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(timestampMs) * 31 * 31 + Long.hashCode(nodeId) * 31 + Long.hashCode(sequence);
    }

    @Override
    public String toString() {
        return "Decoded{timestampMs=" + timestampMs + ", nodeId=" + nodeId + ", sequence=" + sequence + "}";
    }
}
