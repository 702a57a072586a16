package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The API's shape and the design's literals, on test clocks and on the system clock. */
class ApiTest {
    static final long T = 1_737_747_358_021L;

    @Test
    void theDesignLiteralOnAManualClock() {
        ManualClock clock = new ManualClock(T);
        try (Snowflake g = Snowflake.builder().nodeId(37).clock(clock).build()) {
            assertEquals(141264821508263936L, g.nextId());
            Decoded d = g.decode(141264821510144037L);
            assertEquals(T, d.timestampMs());
            assertEquals(496, d.nodeId());
            assertEquals(37, d.sequence());
            assertEquals(Instant.ofEpochMilli(T), d.instant());
            assertEquals(37, g.nodeId());
            assertEquals(Layout.DEFAULT, g.layout());
            assertEquals(Mode.STRICT, g.mode());
        }
        assertEquals(new Decoded(new long[] {T, 37, 0}), Polyflake.decode(141264821508263936L));
    }

    @Test
    void theCoresDefaultsAndVersion() {
        ManualClock clock = new ManualClock(T);
        try (Snowflake g = Snowflake.builder().nodeId(1).clock(clock).build()) {
            assertEquals(((Number) Native.Constants.ALL.get("default_max_wait_ms")).doubleValue(), g.maxWaitMs());
            assertEquals(((Number) Native.Constants.ALL.get("default_epoch_ms")).longValue(), g.epochMs());
            assertEquals(1_704_067_200_000L, g.epochMs());
            assertEquals(OptionalLong.of(5_000), g.maxLeadMs());
        }
        try (Snowflake g = Snowflake.builder().nodeId(2).mode(Mode.MONOTONIC).noLeadLimit().clock(clock).build()) {
            assertEquals(OptionalLong.empty(), g.maxLeadMs());
        }
        try (Snowflake g = Snowflake.builder().nodeId(2).mode(Mode.MONOTONIC).noLeadLimit().maxLeadMs(1_000).clock(clock).build()) {
            assertEquals(OptionalLong.of(1_000), g.maxLeadMs());
        }
        assertEquals("0.1.0", Polyflake.version());
        assertEquals(Layout.of(42, 8, 13), Layout.LONG_LIVED);
        assertEquals(Layout.of(41, 12, 10), Layout.BIG_FLEET);
        assertEquals(Layout.of(39, 12, 12), Layout.SHORT);
        assertEquals(1023, Layout.DEFAULT.maxNodeId());
    }

    @Test
    void strictOnTheSystemClock() {
        try (Snowflake g = new Snowflake(901)) {
            long before = System.currentTimeMillis();
            long a = g.nextId();
            long b = g.nextId();
            assertTrue(b > a);
            Decoded d = g.decode(b);
            assertEquals(901, d.nodeId());
            // An honest margin: the timestamp is between the reads around the calls.
            assertTrue(d.timestampMs() >= before - 1 && d.timestampMs() <= System.currentTimeMillis() + 1, d.toString());
            OptionalLong c = g.tryNextId();
            assertTrue(!c.isPresent() || c.getAsLong() > b);
            long[] batch = g.nextIds(10_000);
            assertEquals(10_000, batch.length);
            for (int k = 1; k < batch.length; k++) {
                assertTrue(batch[k] > batch[k - 1]);
            }
            long[] buf = new long[3];
            g.nextIds(buf);
            assertTrue(buf[0] > batch[batch.length - 1] && buf[2] > buf[1]);
            assertEquals(0, g.nextIds(0).length);
            Health h = g.health();
            assertTrue(h.ok());
            assertEquals("ok", h.status());
            assertEquals(901, h.nodeId());
            assertEquals("static", h.source());
            assertEquals(Mode.STRICT, h.mode());
            assertTrue(h.idsIssued() >= 10_005, h.toString());
            // A static node id keeps a mark on the host (kind host) where the state directory
            // allows it; where it does not, health says why.
            assertTrue(h.lease().map(l -> "host".equals(l.get("kind"))).orElse(!h.restartGuardNote().isEmpty()), h.toString());
            assertEquals(0, h.restartWaits());
            assertEquals(Set.of("state", "synchronized", "max_error_us", "est_error_us"), h.clockSync().keySet());
            assertTrue(h.clockSync().get("synchronized") instanceof Boolean, h.toString());
            assertTrue(h.lastIssuedMs().isPresent());
            g.waitReady(Duration.ofMillis(10)); // no lease: nothing to wait for
        }
    }

    @Test
    void monotonicNeverWaits() {
        ManualClock clock = new ManualClock(T);
        try (Snowflake g = Snowflake.builder().nodeId(9).mode(Mode.MONOTONIC).clock(clock).build()) {
            long a = g.nextId();
            clock.advance(-600);
            long b = g.nextId();
            assertTrue(b > a);
            assertEquals(Mode.MONOTONIC, g.health().mode());
        }
    }

    @Test
    void waitsParkInJavaOnTheSystemClock() {
        // 3 ms of IDs on one node: several spent milliseconds, each waited out parked.
        try (Snowflake g = new Snowflake(902)) {
            Set<Long> seen = new HashSet<>();
            long last = -1;
            for (int k = 0; k < 3 * 4096; k++) {
                long id = g.nextId();
                assertTrue(id > last && seen.add(id));
                last = id;
            }
            Health h = g.health();
            assertEquals(3 * 4096, h.idsIssued());
            assertEquals(0, h.rewindsRefused());
        }
    }

    @Test
    void uuid7AndUlid() {
        UUID a = Polyflake.uuid7();
        UUID b = Polyflake.uuid7();
        assertEquals(7, a.version());
        assertEquals(2, a.variant());
        assertTrue(ScenariosTest.u128(a).compareTo(ScenariosTest.u128(b)) < 0, a + " then " + b);
        long now = System.currentTimeMillis();
        assertTrue(Math.abs(Uuid7Generator.timestampMs(b) - now) < 5_000);
        String u = Polyflake.ulid();
        String v = Polyflake.ulid();
        assertEquals(26, u.length());
        assertTrue(u.compareTo(v) < 0, u + " " + v);
        assertTrue(Math.abs(UlidGenerator.timestampMs(v) - now) < 5_000);

        ManualClock clock = new ManualClock(T);
        Uuid7Generator g = Uuid7Generator.builder().clock(clock).build();
        try (UlidGenerator l = UlidGenerator.builder().clock(clock).mode(Mode.MONOTONIC).build()) {
            UUID x = g.nextUuid();
            assertTrue(x.toString().startsWith("019499d0-6145-7"), x.toString());
            assertEquals(T, Uuid7Generator.timestampMs(x));
            assertEquals(T, UlidGenerator.timestampMs(l.nextUlid()));
            assertTrue(g.tryNextUuid().isPresent());
            assertTrue(l.tryNextUlid().isPresent());
            assertEquals(2, g.health().idsIssued());
            g.close();
            assertThrows(GeneratorClosedException.class, g::nextUuid);
            assertEquals("closed", g.health().status());
        }
        try (Uuid7Generator g2 = new Uuid7Generator(); UlidGenerator l2 = new UlidGenerator()) {
            assertTrue(ScenariosTest.u128(g2.nextUuid()).compareTo(ScenariosTest.u128(g2.nextUuid())) < 0);
            assertTrue(l2.nextUlid().compareTo(l2.nextUlid()) < 0);
        }
    }

    @Test
    void oneTimeIdClassOfEitherFormat() {
        ManualClock clock = new ManualClock(T);
        try (TimeIdGenerator g = TimeIdGenerator.builder(TimeIdGenerator.Format.ULID).clock(clock).build();
             TimeIdGenerator u = new Uuid7Generator()) {
            assertEquals(TimeIdGenerator.Format.ULID, g.format());
            long[] a = UlidGenerator.parse(g.nextId());
            long[] b = UlidGenerator.parse(g.tryNextId().orElseThrow());
            assertEquals(a[0], b[0]);
            assertEquals(1, b[1] - a[1], "the ULID spec: +1 within the millisecond");
            assertEquals(T, UlidGenerator.timestampMs(g.nextId()));
            assertEquals(TimeIdGenerator.Format.UUID7, u.format());
            assertEquals(7, UUID.fromString(u.nextId()).version());
            // The ULID spec's example millisecond, 1469922850259, with 80 bits of 0.
            assertEquals("01ARZ3NDEK0000000000000000", TimeIdGenerator.Format.ULID.text(0x0156_3E3A_B5D3L << 16, 0));
        }
    }

    @Test
    void everyCoreErrorKindHasItsClass() throws Exception {
        String[] kinds = ((String) Native.Constants.ALL.get("error_kinds")).split(",");
        assertTrue(kinds.length >= 20, "error kinds: " + kinds.length);
        for (String kind : kinds) {
            Class<?> c = Class.forName("dev.polyflake." + kind.split(":")[0] + "Exception");
            assertTrue(PolyflakeException.class.isAssignableFrom(c), c.getName());
            assertTrue(java.lang.reflect.Modifier.isFinal(c.getModifiers()), c.getName());
        }
    }

    @Test
    void errorsCarryTheCoresCodeMessageAndFields() {
        ManualClock clock = new ManualClock(T);
        try (Snowflake g = Snowflake.builder().nodeId(7).clock(clock).build()) {
            g.nextId();
            clock.advance(-600);
            ClockMovedBackwardsException e = assertThrows(ClockMovedBackwardsException.class, g::nextId);
            assertEquals("CLOCK_MOVED_BACKWARDS", e.code());
            assertEquals(600, e.behindMs());
            assertEquals(7, e.nodeId());
            assertFalse(e.stuck());
            assertEquals(5.0, e.maxWaitMs());
            assertTrue(e.getMessage().contains("600"), e.getMessage());
            Map<String, Object> f = e.fields();
            assertEquals(600L, f.get("behind_ms"));
            assertEquals(1, g.health().rewindsRefused());
            assertEquals("clock_behind", g.health().status());
        }
    }

    @Test
    void scriptedAndManualClocks() {
        ScriptedClock sc = new ScriptedClock(1_704_067_201_000L, 1_704_067_201_000L);
        try (Snowflake g = Snowflake.builder().nodeId(3).clock(sc).build()) {
            long[] ids = {g.nextId(), g.nextId(), g.nextId()};
            assertEquals(0, g.decode(ids[0]).sequence());
            assertEquals(1, g.decode(ids[1]).sequence());
            assertEquals(1_704_067_201_001L, g.decode(ids[2]).timestampMs()); // then 1 ms per read
        }
        ManualClock m = new ManualClock(100);
        m.advance(5);
        m.elapse(10);
        m.set(1_000);
        assertEquals(1_000, m.get());
    }
}
