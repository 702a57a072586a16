package dev.polyflake;

/** How a generator treats the wall clock (the core's two modes). */
public enum Mode {
    /** An issued timestamp never exceeds the wall clock: small rewinds are waited out, large ones refused. */
    STRICT("strict"),
    /** Never waits: borrows from the next millisecond on a rewind or a spent sequence. */
    MONOTONIC("monotonic");

    private final String coreName;

    Mode(String coreName) {
        this.coreName = coreName;
    }

    /**
     * The core's name of the mode, as health reports it.
     *
     * @return {@code "strict"} or {@code "monotonic"}
     */
    public String coreName() {
        return coreName;
    }

    static Mode fromCore(String name) {
        for (Mode m : values()) {
            if (m.coreName.equals(name)) {
                return m;
            }
        }
        throw new IllegalStateException("polyflake: unknown mode from the core: " + name);
    }
}
