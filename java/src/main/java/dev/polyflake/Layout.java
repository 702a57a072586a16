package dev.polyflake;

import java.util.Objects;

/**
 * The bit layout of an ID: timestamp, node and sequence widths adding up to 63, checked by the
 * core ({@link InvalidLayoutException} otherwise). The presets are the core's.
 */
public final class Layout {
    /** 41/10/12: 69.7 years, 1,024 nodes, 4,096 IDs per ms (the default). */
    public static final Layout DEFAULT = named("default");
    /** 42/8/13: 139.4 years, 256 nodes, 8,192 IDs per ms. */
    public static final Layout LONG_LIVED = named("long_lived");
    /** 41/12/10: 4,096 nodes, 1,024 IDs per ms. */
    public static final Layout BIG_FLEET = named("big_fleet");
    /** 39/12/12: 17.4 years. */
    public static final Layout SHORT = named("short");

    private final int timestampBits;
    private final int nodeBits;
    private final int sequenceBits;

    private Layout(long[] bits) {
        this.timestampBits = (int) bits[0];
        this.nodeBits = (int) bits[1];
        this.sequenceBits = (int) bits[2];
    }

    /**
     * A custom layout, checked by the core.
     *
     * @param timestampBits bits of the timestamp
     * @param nodeBits bits of the node id
     * @param sequenceBits bits of the sequence
     * @return the layout
     * @throws InvalidLayoutException unless each is at least 1 bit and they add up to 63
     */
    public static Layout of(int timestampBits, int nodeBits, int sequenceBits) {
        return parse(timestampBits + "," + nodeBits + "," + sequenceBits);
    }

    /**
     * A preset by the core's name: {@code default}, {@code long_lived}, {@code big_fleet},
     * {@code short}.
     *
     * @param name the preset's name
     * @return the layout
     * @throws UnknownLayoutException for any other name
     */
    public static Layout named(String name) {
        Objects.requireNonNull(name, "Layout.named(name): name is null");
        if (name.contains(",")) {
            return parse("," + name); // not a name: let the core refuse it as one
        }
        return parse(name);
    }

    private static Layout parse(String text) {
        Native.ensureLoaded();
        long[] bits = new long[3];
        Native.layout(text, bits);
        return new Layout(bits);
    }

    /** @return bits of the timestamp */
    public int timestampBits() {
        return timestampBits;
    }

    /** @return bits of the node id */
    public int nodeBits() {
        return nodeBits;
    }

    /** @return bits of the sequence */
    public int sequenceBits() {
        return sequenceBits;
    }

    /** @return the largest node id this layout holds */
    public long maxNodeId() {
        return (1L << nodeBits) - 1;
    }

    String wire() {
        return timestampBits + "," + nodeBits + "," + sequenceBits;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Layout && ((Layout) o).wire().equals(wire());
    }

    @Override
    public int hashCode() {
        return wire().hashCode();
    }

    @Override
    public String toString() {
        return "Layout(" + timestampBits + "/" + nodeBits + "/" + sequenceBits + ")";
    }
}
