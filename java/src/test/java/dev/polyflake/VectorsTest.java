package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigInteger;
import java.util.Iterator;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * tests/vectors/layouts.json and formats.json through the binding: every layout case minted (a
 * frozen ManualClock at the case's millisecond, sequence + 1 IDs from its node) and decoded; the
 * literals; the invalid node ids, IDs and layouts; the UUIDv7 and ULID conformance values.
 */
class VectorsTest {
    @Test
    void layouts() throws Exception {
        JsonNode v = Support.readJson(Support.vectors().resolve("layouts.json"));
        assertEquals(v.get("epoch_ms_default").asLong(), ((Number) Native.Constants.ALL.get("default_epoch_ms")).longValue());
        int cases = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = v.get("layouts").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode l = e.getValue();
            Layout layout = Layout.of(l.get("timestamp_bits").asInt(), l.get("node_bits").asInt(), l.get("sequence_bits").asInt());
            assertEquals(l.get("max_node_id").asLong(), layout.maxNodeId(), e.getKey());
            for (JsonNode c : l.get("cases")) {
                String where = e.getKey() + " " + c;
                ManualClock clock = new ManualClock(c.get("epoch_ms").asLong());
                try (Snowflake g = Snowflake.builder().nodeId(c.get("node_id").asLong()).layout(layout).clock(clock).build()) {
                    long[] ids = g.nextIds(c.get("sequence").asInt() + 1);
                    long want = Long.parseLong(c.get("id").asText());
                    assertEquals(want, ids[ids.length - 1], where);
                    Decoded d = g.decode(want);
                    assertEquals(c.get("epoch_ms").asLong(), d.timestampMs(), where);
                    assertEquals(c.get("node_id").asLong(), d.nodeId(), where);
                    assertEquals(c.get("sequence").asLong(), d.sequence(), where);
                    if (e.getKey().startsWith("default")) {
                        assertEquals(d, Polyflake.decode(want), where);
                    }
                }
                cases++;
            }
        }
        assertTrue(cases > 20, "cases: " + cases);
        for (JsonNode lit : v.get("literals")) {
            Decoded d = Polyflake.decode(Long.parseLong(lit.get("id").asText()));
            assertEquals(lit.get("epoch_ms").asLong(), d.timestampMs());
            assertEquals(lit.get("node_id").asLong(), d.nodeId());
            assertEquals(lit.get("sequence").asLong(), d.sequence());
        }
        JsonNode bad = v.get("invalid");
        for (JsonNode n : bad.get("node_id_default_layout")) {
            BigInteger big = new BigInteger(n.asText());
            if (big.bitLength() < 64) {
                PolyflakeException ex = assertThrows(InvalidNodeIdException.class,
                    () -> Snowflake.builder().nodeId(big.longValue()).clock(new ManualClock(1_704_067_200_000L)).build());
                assertTrue(ex.getMessage().contains(n.asText()), ex.getMessage());
            }
            // Past a long: not expressible through nodeId(long); the environment variable source
            // takes the text as written, and the core refuses it.
        }
        for (JsonNode s : bad.get("decode_default_layout")) {
            BigInteger big;
            try {
                big = new BigInteger(s.asText());
            } catch (NumberFormatException notANumber) {
                continue; // text: Java's decode takes a long, text never reaches it
            }
            if (big.bitLength() < 64) {
                assertThrows(InvalidIdException.class, () -> Polyflake.decode(big.longValue()), s.asText());
            }
        }
        for (JsonNode l : bad.get("layouts")) {
            PolyflakeException ex = assertThrows(InvalidLayoutException.class, () -> Layout.of(l.get(0).asInt(), l.get(1).asInt(), l.get(2).asInt()));
            assertEquals("INVALID_LAYOUT", ex.code());
        }
    }

    @Test
    void formats() throws Exception {
        JsonNode f = Support.readJson(Support.vectors().resolve("formats.json"));
        JsonNode u = f.get("uuid");
        JsonNode ex = u.get("rfc9562_example");
        UUID parsed = Uuid7Generator.parse(ex.get("text").asText());
        assertEquals(ex.get("canonical").asText(), parsed.toString());
        assertEquals(new BigInteger(ex.get("value").asText()), ScenariosTest.u128(parsed));
        assertEquals(ex.get("unix_ts_ms").asLong(), Uuid7Generator.timestampMs(parsed));
        assertEquals(ex.get("version").asInt(), parsed.version());
        assertEquals(ex.get("variant").asInt(), parsed.variant());
        for (JsonNode l : u.get("limits")) {
            assertEquals(l.get("unix_ts_ms").asLong(), Uuid7Generator.timestampMs(Uuid7Generator.parse(l.get("text").asText())));
        }
        for (JsonNode b : u.get("bad_text")) {
            assertThrows(InvalidIdException.class, () -> Uuid7Generator.parse(b.asText()), b.asText());
        }
        for (JsonNode b : u.get("not_v7")) {
            assertThrows(InvalidIdException.class, () -> Uuid7Generator.timestampMs(UUID.fromString(b.asText())), b.asText());
        }
        JsonNode l = f.get("ulid");
        for (JsonNode e : l.get("examples")) {
            String text = e.get("text").asText();
            assertEquals(e.get("unix_ts_ms").asLong(), UlidGenerator.timestampMs(text));
            assertEquals(new BigInteger(e.get("value").asText()), ScenariosTest.u128(UlidGenerator.parse(text)));
            assertEquals(text, UlidGenerator.canonical(text));
        }
        JsonNode pair = l.get("monotonic_pair");
        assertEquals(BigInteger.ONE, ScenariosTest.u128(UlidGenerator.parse(pair.get(1).asText()))
            .subtract(ScenariosTest.u128(UlidGenerator.parse(pair.get(0).asText()))));
        for (JsonNode lim : l.get("limits")) {
            assertEquals(lim.get("unix_ts_ms").asLong(), UlidGenerator.timestampMs(lim.get("text").asText()));
        }
        for (JsonNode a : l.get("aliases")) {
            assertEquals(a.get("canonical").asText(), UlidGenerator.canonical(a.get("text").asText()));
        }
        for (JsonNode b : l.get("bad_text")) {
            assertThrows(InvalidIdException.class, () -> UlidGenerator.parse(b.asText()), b.asText());
        }
    }
}
