package dev.polyflake;

/** Which reading of the clock each ID takes (the core's clock sources). */
public enum ClockSource {
    /** The precise clock (the default). */
    PRECISE("precise"),
    /** The kernel's coarse clock: cheaper to read, a tick behind; used where its tick is fine enough. */
    COARSE("coarse");

    private final String coreName;

    ClockSource(String coreName) {
        this.coreName = coreName;
    }

    /**
     * The core's name of the source, as health reports it.
     *
     * @return {@code "precise"} or {@code "coarse"}
     */
    public String coreName() {
        return coreName;
    }

    static ClockSource fromCore(String name) {
        for (ClockSource s : values()) {
            if (s.coreName.equals(name)) {
                return s;
            }
        }
        throw new IllegalStateException("polyflake: unknown clock source from the core: " + name);
    }
}
