package dev.polyflake;

import java.util.UUID;

/**
 * Process-wide conveniences: a UUIDv7 or a ULID from one shared strict generator each (made at
 * first use, on the system clock), the core's version, and decoding with the default layout.
 */
public final class Polyflake {
    private Polyflake() {}

    private static final class Uuid7Holder {
        static final Uuid7Generator G = new Uuid7Generator();
    }

    private static final class UlidHolder {
        static final UlidGenerator G = new UlidGenerator();
    }

    /** @return a UUIDv7 from the process-wide generator */
    public static UUID uuid7() {
        return Uuid7Holder.G.nextUuid();
    }

    /** @return a ULID from the process-wide generator */
    public static String ulid() {
        return UlidHolder.G.nextUlid();
    }

    /** @return the core's version (the same everywhere: the jar, the crates, the other bindings) */
    public static String version() {
        return (String) Native.Constants.ALL.get("version");
    }

    /**
     * Take an ID apart with the default layout and epoch.
     *
     * @param id the ID
     * @return its millisecond, node id and sequence
     */
    public static Decoded decode(long id) {
        return Snowflake.decodeDefault(id);
    }
}
