package dev.polyflake;

import java.util.Map;

/**
 * Every polyflake error: the core's error, with its stable {@link #code()} (the same string
 * Node's {@code err.code} and the scenario files use) and its {@link #fields()}. Each kind of
 * core error is a subclass ({@link ClockMovedBackwardsException}, {@link NodeIdInUseException},
 * {@link LeaseNotReadyException}, ...) with the same fields as typed accessors; the message is
 * the core's.
 */
public class PolyflakeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The core's stable code. */
    private final String code;
    /** The core's fields (not serialized: a map of plain values, rebuilt as empty). */
    private final transient Map<String, Object> fields;

    /** Made by the native library: {@code code SEP message [SEP fields]}. */
    PolyflakeException(String encoded) {
        super(part(encoded, 1));
        this.code = part(encoded, 0);
        int first = encoded.indexOf(Fields.SEP);
        int second = first < 0 ? -1 : encoded.indexOf(Fields.SEP, first + 1);
        this.fields = Fields.parse(second < 0 ? "" : encoded.substring(second + 1));
    }

    private static String part(String encoded, int index) {
        String[] parts = encoded.split(Fields.SEP, 3);
        return index < parts.length ? parts[index] : "";
    }

    /**
     * The core's stable error code, such as {@code CLOCK_MOVED_BACKWARDS}.
     *
     * @return the code
     */
    public String code() {
        return code;
    }

    /**
     * The error's data by the core's field names (integers as {@code Long}, or
     * {@code BigInteger} past its range; budgets as {@code Double}; flags as {@code Boolean};
     * text as {@code String}; an absent value as null).
     *
     * @return the fields, in the core's order (unmodifiable)
     */
    public Map<String, Object> fields() {
        return fields == null ? Map.of() : fields;
    }

    /**
     * One field by the core's name.
     *
     * @param name the field's name, such as {@code node_id}
     * @return its value, or null if absent
     */
    public Object field(String name) {
        return fields().get(name);
    }
}
