package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The kernel's word on the clock: health reports it ({@link Health#clockSync()}), and
 * {@code maxClockErrorMs} refuses to issue ({@link ClockUnsynchronizedException}, status
 * {@code clock_unsynchronized}) while the clock is unsynchronized or its maximum error is over
 * the bound, and issues again once it is back, within the monitor's second. The kernel's state
 * is moved under a live JVM by a stand-in for {@code adjtimex}
 * (core/tests/support/fake_adjtimex.c, preloaded), never the real clock's.
 */
class ClockSyncTest {
    /** The stand-in, built with cc into {@code dir}. */
    static Path shim(Path dir) throws Exception {
        Path so = dir.resolve("fake_adjtimex.so");
        Path src = Support.root().resolve("core/tests/support/fake_adjtimex.c");
        Process cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-O2", "-o", so.toString(), src.toString())
            .redirectErrorStream(true).start();
        String out = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(cc.waitFor(60, TimeUnit.SECONDS) && cc.exitValue() == 0, "cc " + src + ": " + out);
        return so;
    }

    @Test
    void theKernelsWordRefusesAndReleasesABoundGenerator() throws Exception {
        Path dir = Files.createTempDirectory("polyflake-java-sync-");
        Path state = dir.resolve("state");
        try {
            Path so = shim(dir);
            Files.write(state, "0 0 5000 1000".getBytes(StandardCharsets.UTF_8)); // synchronized, 5 ms of maximum error
            Map<String, String> env = Map.of("SYNC", "1", "NODE", "952", "LD_PRELOAD", so.toString(),
                "PF_FAKE_ADJTIMEX", state.toString(), "POLYFLAKE_STATE_DIR", dir.toString());
            try (Kid kid = new Kid(env, null, dir.resolve("kid.err"))) {
                String a = ask(kid, x -> true);
                assertTrue(a.contains("bound=ID ") && a.contains("status=ok"), a);
                assertTrue(a.contains("state=ok") && a.contains("max_error_us=5000") && a.contains("synchronized=true"), a);

                set(state, "5 64 16000000 16000000"); // unsynchronized (TIME_ERROR, STA_UNSYNC)
                a = ask(kid, x -> x.contains("bound=CLOCK_UNSYNCHRONIZED"));
                assertTrue(a.contains("node_id=952 max_error_us=16000000"), a);
                assertTrue(a.contains("not synchronized"), a);
                assertTrue(a.contains("free=ID"), a);
                assertTrue(a.contains("status=clock_unsynchronized"), a);
                assertTrue(a.contains("state=unsynchronized") && a.contains("synchronized=false"), a);

                set(state, "0 0 80000 1000"); // synchronized, but 80 ms of maximum error: over the 50 ms bound
                a = ask(kid, x -> x.contains("max_error_us=80000 cause"));
                assertTrue(a.contains("80.0 ms, over max_clock_error_ms = 50"), a);

                set(state, "1 0 2000 500"); // synchronized, a leap second to insert tonight
                a = ask(kid, x -> x.contains("bound=ID "));
                assertTrue(a.contains("state=insert_leap") && a.contains("status=ok"), a);
                kid.tell("stop");
                assertEquals(0, kid.waitFor(), kid.stderrText());
            }
        } finally {
            Support.deleteTree(dir);
        }
    }

    static void set(Path state, String words) throws Exception {
        Files.write(state, words.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Ask until the answer satisfies {@code until}: the monitor reads the kernel once a second,
     * so 5 s covers it on a loaded machine too.
     */
    static String ask(Kid kid, Predicate<String> until) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            kid.tell("check");
            String a = kid.line("ANSWER");
            if (until.test(a)) {
                return a;
            }
            assertTrue(System.nanoTime() < deadline, "still, after 5 s: " + a);
            Thread.sleep(100);
        }
    }

    @Test
    void theSettingIsChecked() {
        for (long bad : new long[] {0, 16_001}) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> Snowflake.builder().nodeId(956).maxClockErrorMs(bad).build());
            assertTrue(e.getMessage().contains(Long.toString(bad)), e.getMessage());
            assertTrue(e.getMessage().contains("max_clock_error_ms"), e.getMessage());
        }
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
            () -> Snowflake.builder().nodeId(956).maxClockErrorMs(100).clock(new ManualClock(1_737_747_358_021L)).build());
        assertTrue(e.getMessage().contains("injected clock"), e.getMessage());
        assertThrows(InvalidArgumentException.class, () -> Uuid7Generator.builder().maxClockErrorMs(0).build());
    }

    @Test
    void healthReportsTheKernelsWordWithoutABound() {
        // Whatever this host's clock is (this machine's kernel clock is unsynchronized: no time
        // daemon), a generator without a bound issues and says what the kernel says.
        try (Snowflake g = new Snowflake(954); Uuid7Generator u = new Uuid7Generator()) {
            assertTrue(g.nextId() > 0);
            Health h = g.health();
            assertTrue(h.ok(), h.toString());
            assertNotEquals("clock_unsynchronized", h.status());
            Map<String, Object> sync = h.clockSync();
            assertTrue(sync.get("state") instanceof String, sync.toString());
            assertTrue(sync.get("synchronized") instanceof Boolean, sync.toString());
            assertTrue(((Long) sync.get("max_error_us")) >= -1, sync.toString());
            assertTrue(((Long) sync.get("est_error_us")) >= -1, sync.toString());
            assertEquals(sync.keySet(), u.health().clockSync().keySet());
            if (Boolean.FALSE.equals(sync.get("synchronized")) && !"unavailable".equals(sync.get("state"))) {
                // On such a host a bound generator refuses, and says why.
                try (Snowflake bound = Snowflake.builder().nodeId(955).maxClockErrorMs(16_000).build()) {
                    ClockUnsynchronizedException e = assertThrows(ClockUnsynchronizedException.class, bound::nextId);
                    assertEquals(955, e.nodeId());
                    assertTrue(e.cause().contains("not synchronized"), e.cause());
                    assertEquals("clock_unsynchronized", bound.health().status());
                }
            }
        }
    }
}
