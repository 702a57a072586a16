package dev.polyflake;

import java.nio.file.Path;

/**
 * What ClassLoaderTest asks of a copy of this package loaded by a class loader of its own (so
 * with its own copy of the native library): each call goes through {@code Method.invoke}, and
 * only JDK types cross between the loaders.
 */
public final class OtherLoader {
    private OtherLoader() {}

    /** A generator on {@code node} with its mark in {@code state}. */
    public static AutoCloseable open(long node, String state, boolean monotonic) {
        return Snowflake.builder().nodeId(node).mode(monotonic ? Mode.MONOTONIC : Mode.STRICT)
            .restartGuard(RestartGuard.REQUIRED).stateDir(Path.of(state)).build();
    }

    /** {@code n} IDs: one batch, or one call each. */
    public static long[] mint(AutoCloseable g, int n, boolean batch) {
        Snowflake s = (Snowflake) g;
        if (batch) {
            return s.nextIds(n);
        }
        long[] out = new long[n];
        for (int k = 0; k < n; k++) {
            out[k] = s.nextId();
        }
        return out;
    }

    /** The health field {@code name} of {@code g}. */
    public static Object health(AutoCloseable g, String name) {
        return ((Snowflake) g).health().get(name);
    }

    /**
     * Build a generator on {@code node} and say how that went: {@code built}, or the refusal as
     * {@code CODE|holder_pid|holder}.
     */
    public static String tryOpen(long node, String state) {
        try (Snowflake g = (Snowflake) open(node, state, false)) {
            return "built " + g.nodeId();
        } catch (NodeIdInUseException e) {
            return e.code() + "|" + e.holderPid() + "|" + e.holder();
        }
    }
}
