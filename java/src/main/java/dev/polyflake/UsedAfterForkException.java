package dev.polyflake;

/**
 * The generator was created before fork() and this is the child process: it shares the parent's node id and state, so it refuses to issue.
 *
 * <p>The core's error kind UsedAfterFork: {@link #code()} is its stable code, {@link #fields()}
 * every field by the core's name, and the accessors below the same fields typed.
 */
public final class UsedAfterForkException extends PolyflakeException {
    private static final long serialVersionUID = 1L;

    /** Made by the native library from the core's error (code, message, fields). */
    UsedAfterForkException(String encoded) {
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
}
