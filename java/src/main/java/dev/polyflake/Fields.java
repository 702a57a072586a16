package dev.polyflake;

import java.math.BigInteger;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads the fields the native library sends (a health snapshot, an error's data): tokens
 * separated by U+001F, {@code name value} pairs, each value tagged by its first character
 * ({@code i} integer, {@code f} float, {@code b} flag, {@code s} text, {@code n} absent,
 * {@code r<count>} a nested record of that many fields). No rule lives here: the names and
 * values are the core's.
 */
final class Fields {
    static final String SEP = "\u001f";

    private Fields() {}

    /** Every field of {@code text}, in the core's order, as an unmodifiable map. */
    static Map<String, Object> parse(String text) {
        if (text == null || text.isEmpty()) {
            return Collections.emptyMap();
        }
        String[] tokens = text.split(SEP, -1);
        int[] pos = {0};
        return read(tokens, pos, Integer.MAX_VALUE);
    }

    private static Map<String, Object> read(String[] tokens, int[] pos, int count) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int k = 0; k < count && pos[0] + 1 < tokens.length; k++) {
            String name = tokens[pos[0]++];
            String value = tokens[pos[0]++];
            out.put(name, value(value, tokens, pos));
        }
        return Collections.unmodifiableMap(out);
    }

    private static Object value(String token, String[] tokens, int[] pos) {
        String rest = token.substring(1);
        switch (token.charAt(0)) {
            case 'i':
                BigInteger big = new BigInteger(rest);
                return big.bitLength() < 64 ? (Object) big.longValue() : big;
            case 'f':
                return Double.valueOf(rest.replace("inf", "Infinity"));
            case 'b':
                return Boolean.valueOf(rest);
            case 's':
                return rest;
            case 'r':
                return read(tokens, pos, Integer.parseInt(rest));
            default:
                return null;
        }
    }

    /** An integer field as a {@code BigInteger} (the core's widest integers). */
    static BigInteger big(Object v) {
        return v instanceof BigInteger ? (BigInteger) v : BigInteger.valueOf(((Number) v).longValue());
    }

    /** An optional integer field: null when absent. */
    static Long optLong(Object v) {
        return v == null ? null : ((Number) v).longValue();
    }
}
