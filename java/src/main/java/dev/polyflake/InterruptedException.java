package dev.polyflake;

/**
 * A call was cut short while it waited (a signal for Python, a terminating Node worker, the C ABI's cancel, the service's shutdown). It issued nothing its caller did not get, and IDs it had reserved are never issued.
 *
 * <p>The core's error kind Interrupted: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class InterruptedException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    InterruptedException(String encoded) {
        super(encoded);
    }

    /**
     * The generator's node id.
     *
     * @return the core's field node_id
     */
    public long nodeId() {
        return ((Number) field("node_id")).longValue();
    }

    /**
     * How long the call had waited, in milliseconds.
     *
     * @return the core's field waited_ms
     */
    public long waitedMs() {
        return ((Number) field("waited_ms")).longValue();
    }
}
