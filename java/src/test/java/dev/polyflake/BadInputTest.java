package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Bad input everywhere gets a clear exception that echoes what was sent: nulls are
 * NullPointerExceptions naming the argument; out-of-range values are the core's errors with the
 * value in the message; a closed generator refuses with GENERATOR_CLOSED. Never a crash.
 */
class BadInputTest {
    static final long T = 1_737_747_358_021L;

    static void refused(Class<? extends PolyflakeException> cls, String code, String echo, Executable call) {
        PolyflakeException e = assertThrows(cls, call);
        assertEquals(code, e.code());
        assertTrue(e.getMessage().contains(echo), "message should echo " + echo + ": " + e.getMessage());
    }

    static Snowflake.Builder onClock() {
        return Snowflake.builder().clock(new ManualClock(T));
    }

    @Test
    void nulls() {
        List<Executable> calls = Arrays.asList(
            () -> Snowflake.builder().fileLease(null),
            () -> Snowflake.builder().etcd(null),
            () -> Snowflake.builder().etcd(Arrays.asList("http://127.0.0.1:1", null)),
            () -> Snowflake.builder().zooKeeper(null),
            () -> Snowflake.builder().fromEnv(null),
            () -> Snowflake.builder().fromIpv4(null, 24),
            () -> Snowflake.builder().mode(null),
            () -> Snowflake.builder().layout(null),
            () -> Snowflake.builder().clockSource(null),
            () -> Snowflake.builder().clock(null),
            () -> Snowflake.builder().identity(null),
            () -> Snowflake.builder().credential("username", null),
            () -> Snowflake.builder().restartGuard(null),
            () -> Snowflake.builder().stateDir(null),
            () -> Snowflake.builder().hostScope(null),
            () -> Layout.named(null),
            () -> new ScriptedClock((long[]) null),
            () -> Uuid7Generator.timestampMs(null),
            () -> UlidGenerator.timestampMs(null));
        for (Executable call : calls) {
            NullPointerException e = assertThrows(NullPointerException.class, call);
            assertTrue(e.getMessage().endsWith("is null"), e.getMessage());
        }
        try (Snowflake g = onClock().nodeId(1).build()) {
            assertTrue(assertThrows(NullPointerException.class, () -> g.nextIds(null)).getMessage().contains("buf"));
            assertTrue(assertThrows(NullPointerException.class, () -> g.waitReady(null)).getMessage().contains("timeout"));
        }
    }

    @Test
    void outOfRange() {
        refused(InvalidNodeIdException.class, "INVALID_NODE_ID", "1024", () -> onClock().nodeId(1024).build());
        refused(InvalidNodeIdException.class, "INVALID_NODE_ID", "-1", () -> new Snowflake(-1));
        refused(InvalidNodeIdException.class, "INVALID_NODE_ID", "-9223372036854775808", () -> onClock().nodeId(Long.MIN_VALUE).build());
        refused(InvalidLayoutException.class, "INVALID_LAYOUT", "13", () -> Layout.of(41, 10, 13));
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "-1", () -> Layout.of(-1, 10, 12));
        refused(UnknownLayoutException.class, "UNKNOWN_LAYOUT", "huge", () -> Layout.named("huge"));
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "-1", () -> onClock().nodeId(1).maxWaitMs(-1).build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "NaN", () -> onClock().nodeId(1).maxWaitMs(Double.NaN).build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "inf", () -> onClock().nodeId(1).maxWaitMs(Double.POSITIVE_INFINITY).build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "60001", () -> onClock().nodeId(1).maxWaitMs(60_001).build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "-5", () -> onClock().nodeId(1).maxForwardStepMs(-5).build());
        refused(InvalidEpochException.class, "INVALID_EPOCH", "-1", () -> Snowflake.builder().nodeId(1).epochMs(-1).build());
        refused(InvalidEpochException.class, "INVALID_EPOCH", "99999999999999",
            () -> Snowflake.builder().nodeId(1).epochMs(99_999_999_999_999L).build());
        refused(InvalidNodeSourceException.class, "INVALID_NODE_SOURCE", "NO_SUCH_POLYFLAKE_VAR",
            () -> Snowflake.builder().fromEnv("NO_SUCH_POLYFLAKE_VAR").clock(new ManualClock(T)).build());
        refused(InvalidNodeSourceException.class, "INVALID_NODE_SOURCE", "300.1.1.1",
            () -> onClock().fromIpv4("300.1.1.1", 24).build());
        refused(InvalidNodeSourceException.class, "INVALID_NODE_SOURCE", "16",
            () -> onClock().fromIpv4("10.0.0.1", 16).build());
        refused(InvalidNodeSourceException.class, "INVALID_NODE_SOURCE", "web",
            () -> onClock().fromHostname("web").build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "token",
            () -> Snowflake.builder().etcd(List.of("http://127.0.0.1:1")).credential("token", "x").build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "no node id", () -> Snowflake.builder().build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "-3", () -> new ManualClock(T).elapse(-3));
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "-7", () -> onClock().fileLease(Path.of("/tmp")).slots(-7).build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "-9", () -> onClock().nodeId(1).maxLeadMs(-9).build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "16001", () -> Snowflake.builder().nodeId(1).maxClockErrorMs(16_001).build());
        // A host scope is ASCII letters, digits, '.', '_' and '-', at most 40 bytes.
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "\"two words\"", () -> Snowflake.builder().nodeId(1).hostScope("two words").build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "\"caf\u00e9\"", () -> Snowflake.builder().nodeId(1).hostScope("caf\u00e9").build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "41", () -> Snowflake.builder().nodeId(1).hostScope("x".repeat(41)).build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "-2", () -> Snowflake.builder().nodeId(1).reserveMs(-2).build());
        refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "86400001",
            () -> Snowflake.builder().nodeId(1).maxRestartWaitMs(86_400_001).build());
        // The hostname source reads a StatefulSet ordinal.
        try (Snowflake g = onClock().fromHostname("ids-7").build()) {
            assertEquals(7, g.nodeId());
        }
        try (Snowflake g = onClock().fromIpv4("10.0.3.7", 22).build()) {
            assertEquals(3 * 256 + 7, g.nodeId());
        }
    }

    @Test
    void badCalls() {
        try (Snowflake g = onClock().nodeId(2).build()) {
            refused(InvalidIdException.class, "INVALID_ID", "-5", () -> g.decode(-5));
            refused(InvalidIdException.class, "INVALID_ID", "-5", () -> Polyflake.decode(-5));
            refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "-1", () -> g.nextIds(-1));
            refused(InvalidArgumentException.class, "INVALID_ARGUMENT", "2147483647", () -> g.nextIds(Integer.MAX_VALUE));
        }
        refused(InvalidIdException.class, "INVALID_ID", "0000", () -> UlidGenerator.timestampMs("0000"));
        refused(InvalidIdException.class, "INVALID_ID", "", () -> UlidGenerator.parse(""));
        PolyflakeException notV7 = assertThrows(InvalidIdException.class,
            () -> Uuid7Generator.timestampMs(java.util.UUID.fromString("017f22e2-79b0-4cc3-98c4-dc0c0c07398f")));
        assertEquals("INVALID_ID", notV7.code());
    }

    @Test
    void closedGenerators() {
        Snowflake g = onClock().nodeId(4).build();
        g.nextId();
        g.close();
        g.close(); // twice is fine
        refused(GeneratorClosedException.class, "GENERATOR_CLOSED", "4", g::nextId);
        assertThrows(GeneratorClosedException.class, g::tryNextId);
        assertThrows(GeneratorClosedException.class, () -> g.nextIds(3));
        assertThrows(GeneratorClosedException.class, () -> g.waitReady(Duration.ZERO));
        assertEquals("closed", g.health().status());
        assertEquals(4, assertThrows(GeneratorClosedException.class, g::nextId).nodeId());
        // A closed generator on the system clock gives its node id back.
        Snowflake s = new Snowflake(905);
        s.close();
        // On the system clock the calls take the no-wait native path first (a batch written in
        // place): the error is thrown all the same, and a refused batch leaves the array as it was.
        refused(GeneratorClosedException.class, "GENERATOR_CLOSED", "905", s::nextId);
        assertThrows(GeneratorClosedException.class, s::tryNextId);
        long[] buf = {7, 7, 7};
        assertThrows(GeneratorClosedException.class, () -> s.nextIds(buf));
        assertArrayEquals(new long[] {7, 7, 7}, buf);
        Uuid7Generator u7 = new Uuid7Generator();
        u7.close();
        refused(GeneratorClosedException.class, "GENERATOR_CLOSED", "closed", u7::nextUuid);
        assertThrows(GeneratorClosedException.class, u7::tryNextUuid);
        try (Snowflake again = new Snowflake(905)) {
            assertTrue(again.nextId() > 0);
        }
        UlidGenerator u = new UlidGenerator();
        u.close();
        refused(GeneratorClosedException.class, "GENERATOR_CLOSED", "closed", u::nextUlid);
    }

    @Test
    void aStaticNodeIdIsHeldOnce() {
        try (Snowflake a = new Snowflake(906)) {
            NodeIdInUseException e = assertThrows(NodeIdInUseException.class, () -> new Snowflake(906));
            assertEquals(906, e.nodeId());
            assertEquals("NODE_ID_IN_USE", e.code());
            assertTrue(a.nextId() > 0);
        }
    }

    @Test
    void aDirectoryThatIsAFile() throws Exception {
        Path f = java.nio.file.Files.createTempFile("polyflake-not-a-dir", ".txt");
        try {
            PolyflakeException e = assertThrows(PolyflakeException.class, () -> onClock().fileLease(f).build());
            assertTrue(e.getMessage().contains(f.getFileName().toString()), e.getMessage());
        } finally {
            java.nio.file.Files.deleteIfExists(f);
        }
    }
}
