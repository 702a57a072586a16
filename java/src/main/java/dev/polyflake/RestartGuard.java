package dev.polyflake;

/**
 * Whether a fixed node id (static, {@code fromEnv}, {@code fromHostname}, {@code fromIpv4}) on
 * the system clock keeps a mark on the host, so that its next holder on this host (a restart, a
 * second copy of the library, a new generator in this JVM) starts above everything it could
 * have issued, whatever the clock did in between (the core's restart guard).
 */
public enum RestartGuard {
    /**
     * Keep a mark where the state directory allows it; where it does not (a read-only
     * container, another user's directory), issue without one, say so once on stderr and in
     * {@link Health#restartGuardNote()}. The default (unless {@code POLYFLAKE_RESTART_GUARD}
     * says otherwise).
     */
    AUTO("auto"),
    /** Keep a mark or refuse to build ({@link LeaseStoreException}, naming the directory and the fixes). */
    REQUIRED("required"),
    /**
     * Keep no mark: a successor after a clock stepped back can repeat IDs. For hosts where the
     * node id never outlives a process (a fresh id per start from an orchestrator).
     */
    OFF("off");

    private final String coreName;

    RestartGuard(String coreName) {
        this.coreName = coreName;
    }

    /**
     * The core's name, as {@code POLYFLAKE_RESTART_GUARD} takes it.
     *
     * @return {@code "auto"}, {@code "required"} or {@code "off"}
     */
    public String coreName() {
        return coreName;
    }
}
