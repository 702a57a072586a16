package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A fixed node id keeps the promises a lease keeps, tried with real JVMs on one host (each a
 * {@link Holder}, see {@link Kid}): a handover between JVMs (a close, {@code System.exit} with
 * the generator open, a SIGKILL) to a successor already waiting for the node id; a restart with
 * the clock stepped back (libfaketime); a monotonic holder that ran ahead; a lease and a static
 * id of one node id; the mark in health; a directory that cannot keep one; a restart wait that
 * parks (a virtual thread unmounts) and is cut short by an interrupt. Every case counts
 * duplicates across the holders' IDs: zero.
 */
class StaticGuardTest {
    /** The JVMs' state directories and ID files. */
    static Path tempDir(String what) throws Exception {
        return Files.createTempDirectory("polyflake-java-guard-" + what + "-");
    }

    static Map<String, String> vars(long node, Path state, Path out, String... more) {
        Map<String, String> v = new HashMap<>();
        v.put("NODE", Long.toString(node));
        v.put("STATE", state.toString());
        v.put("OUT", out.toString());
        for (int k = 0; k < more.length; k += 2) {
            v.put(more[k], more[k + 1]);
        }
        return v;
    }

    static Kid spawn(Path dir, String name, Map<String, String> vars) throws Exception {
        return new Kid(vars, null, dir.resolve(name + ".err"));
    }

    /** Duplicates among every holder's IDs (each set is also checked to be increasing). */
    static int duplicates(long[]... sets) {
        int total = 0;
        for (long[] s : sets) {
            for (int k = 1; k < s.length; k++) {
                assertTrue(s[k] > s[k - 1], "a holder's IDs went down at " + k);
            }
            total += s.length;
        }
        long[] all = new long[total];
        int at = 0;
        for (long[] s : sets) {
            System.arraycopy(s, 0, all, at, s.length);
            at += s.length;
        }
        Arrays.sort(all);
        int dups = 0;
        for (int k = 1; k < all.length; k++) {
            if (all[k] == all[k - 1]) {
                dups++;
            }
        }
        return dups;
    }

    static long max(long[] ids) {
        return Arrays.stream(ids).max().orElse(Long.MIN_VALUE);
    }

    static long min(long[] ids) {
        return Arrays.stream(ids).min().orElse(Long.MAX_VALUE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"close", "exit", "kill"})
    void aHandoverBetweenJvmsRepeatsNothing(String end) throws Exception {
        // A holder mints 3,000 IDs and lets go (a close; System.exit with the generator open; a
        // SIGKILL); a successor already refused once, retrying every 0.2 ms, takes the node id
        // the moment it is free. After a close or an exit the mark is clean: it issues at once.
        // After a kill the mark is up to one reserve (2 s here) ahead: it waits at most that.
        Path dir = tempDir("handover-" + end);
        long reserve = 2_000;
        try (Kid a = spawn(dir, "a", vars(940, dir, dir.resolve("a"), "COUNT", "3000", "HOLD", "1", "RESERVE", "" + reserve,
            "END", end.equals("kill") ? "hang" : end))) {
            a.line("DONE");
            try (Kid b = spawn(dir, "b", vars(940, dir, dir.resolve("b"), "COUNT", "3000", "RETRY", "1", "RESERVE", "" + reserve))) {
                String trying = b.line("TRYING");
                assertEquals(a.pid(), Kid.number(trying, "holder_pid"), trying);
                assertTrue(trying.contains("holder=process " + a.pid() + " (java) on this host"), trying);
                if (end.equals("kill")) {
                    a.kill();
                } else {
                    a.tell("go");
                    assertEquals(0, a.waitFor(), a.stderrText());
                }
                String ready = b.line("READY");
                String done = b.line("DONE");
                assertFalse(done.contains("REFUSED"), done);
                assertEquals(0, b.waitFor(), b.stderrText());
                long[] ai = Kid.ids(dir.resolve("a"));
                long[] bi = Kid.ids(dir.resolve("b"));
                assertEquals(3000, ai.length);
                assertEquals(3000, bi.length);
                assertEquals(0, duplicates(ai, bi));
                // The successor starts above everything its predecessor issued.
                assertTrue(min(bi) > max(ai), ready + " / " + done);
                long firstMs = Kid.number(done, "first_ms");
                System.out.printf("handover (%s): the successor's first ID after %d ms (%s / %s)%n", end, firstMs, ready, done);
                if (end.equals("kill")) {
                    assertEquals("restart_guard", Kid.field(ready, "status"), ready);
                    assertTrue(firstMs <= reserve + 2_000, done);
                } else {
                    assertEquals("ok", Kid.field(ready, "status"), ready);
                    assertTrue(firstMs < 1_000, done);
                }
            }
        } finally {
            Support.deleteTree(dir);
        }
    }

    static void requireFaketime() throws Exception {
        Process p;
        try {
            p = new ProcessBuilder("faketime", "-f", "-1s", "true").start();
        } catch (java.io.IOException e) {
            throw new AssertionError("faketime is missing: make deps-apt installs it", e);
        }
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, "faketime does not run");
    }

    /**
     * A holder mints for 300 ms and is killed (its mark one reserve, 1 s, ahead); its successor,
     * a JVM started beforehand with its wall clock {@code offset} behind (libfaketime, elapsed
     * time true), builds at once. Returns the successor's READY and DONE lines and both ID sets.
     */
    static Object[] restartBehind(long node, String offset) throws Exception {
        requireFaketime();
        Path dir = tempDir("behind");
        try (Kid a = spawn(dir, "a", vars(node, dir, dir.resolve("a"), "MS", "300", "RESERVE", "1000", "END", "hang"));
            Kid b = new Kid(vars(node, dir, dir.resolve("b"), "MS", "300", "RESERVE", "1000", "START", "go"), offset,
                dir.resolve("b.err"))) {
            a.line("DONE");
            b.line("UP");
            a.kill();
            long before = System.currentTimeMillis();
            b.tell("go");
            String ready = b.line("READY");
            long after = System.currentTimeMillis();
            String done = b.line("DONE");
            b.waitFor();
            // libfaketime reached both the JVM's clock and the core's clock_gettime: each read
            // the offset from a moment between this JVM's two readings (0.5 s of margin).
            long behind = Long.parseLong(offset.replace("s", "")) * 1000;
            for (String clock : new String[] {"core_ms", "java_ms"}) {
                long read = Kid.number(ready, clock);
                assertTrue(read >= before + behind - 500 && read <= after + behind + 500, clock + " is not " + offset + ": "
                    + ready + " (this JVM read " + before + " and " + after + ")");
            }
            return new Object[] {ready, done, Kid.ids(dir.resolve("a")), Kid.ids(dir.resolve("b"))};
        } finally {
            Support.deleteTree(dir);
        }
    }

    @Test
    void aRestartWithTheClockSteppedBackWaitsAndRepeatsNothing() throws Exception {
        // Killed (R one reserve ahead), the successor 3 s behind: its first call waits out the
        // guard (what it said remained at the build, or more), issues, repeats nothing.
        Object[] r = restartBehind(943, "-3s");
        String ready = (String) r[0];
        String done = (String) r[1];
        long[] ai = (long[]) r[2];
        long[] bi = (long[]) r[3];
        assertEquals("restart_guard", Kid.field(ready, "status"), ready);
        long remaining = Kid.number(ready, "guard_remaining_ms");
        long firstMs = Kid.number(done, "first_ms");
        System.out.printf("restart 3 s behind: guard %d ms at the build, first ID after %d ms (%s)%n", remaining, firstMs, done);
        assertTrue(remaining > 0, ready);
        // It waited out the guard: its first ID is above the mark, and as long in coming.
        assertTrue(Kid.number(done, "first_id_ms") > Kid.number(ready, "guard_until_ms"), ready + " / " + done);
        assertTrue(firstMs >= remaining - 100, ready + " / " + done);
        assertFalse(done.contains("REFUSED"), done);
        assertTrue(ai.length > 0 && bi.length > 0, ai.length + " / " + bi.length);
        assertEquals(0, duplicates(ai, bi));
        assertTrue(min(bi) > max(ai));
    }

    @Test
    void aClockFurtherBehindThanACallWaitsIsRefused() throws Exception {
        // 30 s behind: longer than a call waits (10 s by default): refused with the reason at
        // once, nothing issued.
        Object[] r = restartBehind(944, "-30s");
        String done = (String) r[1];
        assertTrue(done.contains("REFUSED LEASE_NOT_READY"), done);
        assertTrue(done.contains("longer than a call waits"), done);
        assertTrue(Kid.number(done, "first_ms") < 0, done);
        assertEquals(0, ((long[]) r[3]).length);
    }

    @ParameterizedTest
    @ValueSource(strings = {"exit", "kill"})
    void aMonotonicHolderAheadHandsItsLeadOn(String end) throws Exception {
        // 409,600 IDs at once put a monotonic holder 100 ms ahead of its clock; it goes at once,
        // and a strict and a monotonic successor start above its lead.
        Path dir = tempDir("ahead-" + end);
        try {
            try (Kid a = spawn(dir, "a", vars(945, dir, dir.resolve("o0"), "MODE", "monotonic", "BURST", "409600", "RESERVE", "1000",
                "END", end.equals("kill") ? "hang" : end))) {
                a.line("DONE");
                if (end.equals("kill")) {
                    a.kill();
                } else {
                    assertEquals(0, a.waitFor(), a.stderrText());
                }
            }
            String[] modes = {"strict", "monotonic"};
            for (int i = 0; i < 2; i++) {
                try (Kid b = spawn(dir, "b" + i, vars(945, dir, dir.resolve("o" + (i + 1)), "MODE", modes[i], "COUNT", "20000",
                    "RESERVE", "1000"))) {
                    String done = b.line("DONE");
                    assertFalse(done.contains("REFUSED"), done);
                    assertEquals(0, b.waitFor(), b.stderrText());
                }
            }
            long[] a = Kid.ids(dir.resolve("o0"));
            long[] s = Kid.ids(dir.resolve("o1"));
            long[] m = Kid.ids(dir.resolve("o2"));
            assertEquals(409_600, a.length);
            assertEquals(20_000, s.length);
            assertEquals(20_000, m.length);
            assertEquals(0, duplicates(a, s, m));
            assertTrue(min(s) > max(a) && min(m) > max(s));
        } finally {
            Support.deleteTree(dir);
        }
    }

    @Test
    void aLeaseAndAStaticIdShareOneClaim() throws Exception {
        Path state = tempDir("claim-state");
        Path leases = tempDir("claim-leases");
        Path others = tempDir("claim-leases-other");
        Layout small = Layout.of(41, 3, 19);
        try {
            // In this JVM: a static holder of 0, so a lease of two slots takes 1; a static 1 is
            // then refused (the holder is a generator of this copy of the library: no pid).
            try (Snowflake s0 = Snowflake.builder().nodeId(0).layout(small).restartGuard(RestartGuard.REQUIRED).stateDir(state).build();
                Snowflake l = Snowflake.builder().fileLease(leases).slots(2).reserveMs(50).layout(small).build()) {
                assertEquals(0, s0.nodeId());
                assertEquals(1, l.nodeId());
                assertEquals("file", l.health().lease().get().get("kind"));
                NodeIdInUseException e = assertThrows(NodeIdInUseException.class,
                    () -> Snowflake.builder().nodeId(1).layout(small).stateDir(state).build());
                assertEquals(1, e.nodeId());
                assertNull(e.holderPid());
                assertEquals("", e.holder());
                // Any epoch: their IDs would share bits whenever their elapsed times meet.
                assertThrows(NodeIdInUseException.class,
                    () -> Snowflake.builder().nodeId(0).layout(small).epochMs(1_600_000_000_000L).stateDir(state).build());
                // Another scope may hold it, on purpose.
                try (Snowflake other = Snowflake.builder().nodeId(0).layout(small).hostScope("java-other").stateDir(state).build()) {
                    assertTrue(other.nextId() > 0);
                }
            }
            // Another JVM holds static 0: refused here naming that process; a lease here skips it.
            try (Kid holder = spawn(state, "holder", vars(0, state, state.resolve("ids"), "LAYOUT", "41,3,19", "COUNT", "10",
                "END", "hang"))) {
                holder.line("DONE");
                NodeIdInUseException e = assertThrows(NodeIdInUseException.class,
                    () -> Snowflake.builder().nodeId(0).layout(small).stateDir(state).build());
                assertEquals(holder.pid(), e.holderPid());
                assertTrue(e.holder().contains("process " + holder.pid()), e.holder());
                assertTrue(e.getMessage().contains("process " + holder.pid()), e.getMessage());
                try (Snowflake l = Snowflake.builder().fileLease(others).slots(2).reserveMs(50).layout(small).build()) {
                    assertEquals(1, l.nodeId(), "the lease took the slot of a static holder in another JVM");
                }
            }
        } finally {
            Support.deleteTree(state);
            Support.deleteTree(leases);
            Support.deleteTree(others);
        }
    }

    @Test
    void theMarkIsInHealthAndADirectoryThatCannotKeepOneIsSaidOrRefused() throws Exception {
        Path state = tempDir("mark");
        try {
            long first;
            try (Snowflake g = Snowflake.builder().nodeId(946).restartGuard(RestartGuard.REQUIRED).stateDir(state).build()) {
                first = g.nextId();
                Health h = g.health();
                assertTrue(h.ok(), h.toString());
                Map<String, Object> mark = h.lease().orElseThrow(() -> new AssertionError("no mark in " + h));
                assertEquals("host", mark.get("kind"));
                Path store = Path.of((String) mark.get("store"));
                assertEquals(state.toRealPath(), store.getParent().toRealPath());
                assertTrue(Files.exists(store), store.toString());
                assertEquals("", h.restartGuardNote());
                assertEquals(0, h.restartWaits());
            }
            // A new generator in this JVM continues after the one closed.
            try (Snowflake g = Snowflake.builder().nodeId(946).restartGuard(RestartGuard.REQUIRED).stateDir(state).build()) {
                assertTrue(g.nextId() > first);
            }
            Path notADir = state.resolve("file");
            Files.write(notADir, new byte[0]);
            LeaseStoreException e = assertThrows(LeaseStoreException.class,
                () -> Snowflake.builder().nodeId(947).restartGuard(RestartGuard.REQUIRED).stateDir(notADir).build());
            assertEquals("LEASE_STORE", e.code());
            assertTrue(e.getMessage().contains(notADir.toString()), e.getMessage());
            assertTrue(e.getMessage().contains("POLYFLAKE_STATE_DIR"), e.getMessage());
            try (Snowflake g = Snowflake.builder().nodeId(947).restartGuard(RestartGuard.AUTO).stateDir(notADir).build()) {
                Health h = g.health();
                assertTrue(h.ok() && !h.lease().isPresent(), h.toString());
                assertTrue(h.restartGuardNote().contains("no restart guard"), h.restartGuardNote());
                assertTrue(g.nextId() > 0);
            }
            try (Snowflake g = Snowflake.builder().nodeId(947).restartGuard(RestartGuard.OFF).stateDir(notADir).build()) {
                assertTrue(g.health().restartGuardNote().startsWith("off"), g.health().restartGuardNote());
            }
            // A test clock is not the host's: no claim on the host, no mark.
            try (Snowflake g = Snowflake.builder().nodeId(946).clock(new ManualClock(1_737_747_358_021L)).stateDir(state).build()) {
                assertTrue(g.nextId() > 0);
                assertFalse(g.health().lease().isPresent());
            }
        } finally {
            Support.deleteTree(state);
        }
    }

    @Test
    void aRestartWaitParksUnpinnedAndIsInterruptible() throws Exception {
        // A holder killed with its mark one reserve (3 s) ahead. Here: health says restart_guard;
        // tryNextId says "would wait"; an interrupted thread's wait is cut short with the core's
        // Interrupted; on JDK 21+ five virtual threads (four nextId, one nextIds) wait for the
        // guard on 2 carriers while a sixth keeps ticking: each wait is a park (none goes to the
        // core's native wait), so the carriers stay free.
        Path dir = tempDir("parked");
        try {
            try (Kid a = spawn(dir, "a", vars(948, dir, dir.resolve("a"), "MS", "50", "RESERVE", "3000", "END", "hang"))) {
                a.line("DONE");
                a.kill();
            }
            long[] held = Kid.ids(dir.resolve("a"));
            List<long[]> got = new ArrayList<>();
            got.add(held);
            try (Snowflake g = Snowflake.builder().nodeId(948).restartGuard(RestartGuard.REQUIRED).stateDir(dir).reserveMs(3000).build()) {
                Health h = g.health();
                assertEquals("restart_guard", h.status(), h.toString());
                assertFalse(h.ok());
                long remaining = ((Number) h.lease().get().get("guard_remaining_ms")).longValue();
                assertTrue(remaining > 1_000, h.toString());
                assertFalse(g.tryNextId().isPresent());

                AtomicReference<Throwable> thrown = new AtomicReference<>();
                AtomicBoolean stillInterrupted = new AtomicBoolean();
                Thread waiter = new Thread(() -> {
                    try {
                        g.nextId();
                    } catch (Throwable t) {
                        thrown.set(t);
                        stillInterrupted.set(Thread.currentThread().isInterrupted());
                    }
                });
                waiter.start();
                Thread.sleep(200);
                long cut = System.nanoTime();
                waiter.interrupt();
                waiter.join(10_000);
                long cutMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
                assertTrue(thrown.get() instanceof InterruptedException, String.valueOf(thrown.get()));
                assertEquals("INTERRUPTED", ((InterruptedException) thrown.get()).code());
                assertTrue(stillInterrupted.get(), "the interrupt status was cleared");
                assertTrue(cutMs < 1_000, "the interrupt took " + cutMs + " ms");
                // So is waitReady's.
                Thread.currentThread().interrupt();
                try {
                    assertThrows(InterruptedException.class, () -> g.waitReady(java.time.Duration.ofSeconds(10)));
                } finally {
                    assertTrue(Thread.interrupted());
                }

                if (virtualThreads()) {
                    got.addAll(waitOnVirtualThreads(g));
                }
                long id = g.nextId();
                assertTrue(id > max(held));
                got.add(new long[] {id});
            }
            assertEquals(0, duplicates(got.toArray(new long[0][])));
        } finally {
            Support.deleteTree(dir);
        }
    }

    static boolean virtualThreads() {
        boolean required = Boolean.getBoolean("polyflake.require.virtual.threads");
        boolean available = Runtime.version().feature() >= 21;
        assertTrue(available || !required, "virtual threads required but the JVM is " + Runtime.version());
        return available;
    }

    /** Five virtual threads wait for g's guard on 2 carriers beside a ticking one; their IDs. */
    static List<long[]> waitOnVirtualThreads(Snowflake g) throws Exception {
        assertEquals("2", System.getProperty("jdk.virtualThreadScheduler.parallelism"));
        Method isVirtual = Thread.class.getMethod("isVirtual");
        Method perTask = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
        assumeTrue(g.health().status().equals("restart_guard"), "the guard passed before the virtual threads began");
        long handovers0 = Waits.HANDOVERS.sum();
        Set<String> carriers = ConcurrentHashMap.newKeySet();
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong maxGapNanos = new AtomicLong();
        AtomicLong ticks = new AtomicLong();
        List<long[]> out = new ArrayList<>();
        ExecutorService ex = (ExecutorService) perTask.invoke(null);
        try {
            Future<?> ticker = ex.submit(() -> {
                long last = System.nanoTime();
                while (!done.get()) {
                    Thread.sleep(1);
                    long now = System.nanoTime();
                    maxGapNanos.accumulateAndGet(now - last, Math::max);
                    last = now;
                    ticks.incrementAndGet();
                }
                return null;
            });
            long t0 = System.nanoTime();
            List<Future<long[]>> waiters = new ArrayList<>();
            for (int k = 0; k < 5; k++) {
                boolean batch = k == 4;
                waiters.add(ex.submit(() -> {
                    assertTrue((Boolean) isVirtual.invoke(Thread.currentThread()));
                    carriers.add(VirtualThreadsTest.carrier(Thread.currentThread().toString()));
                    return batch ? g.nextIds(10) : new long[] {g.nextId()};
                }));
            }
            for (Future<long[]> w : waiters) {
                out.add(w.get(30, TimeUnit.SECONDS));
            }
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            done.set(true);
            ticker.get(10, TimeUnit.SECONDS);
            long handovers = Waits.HANDOVERS.sum() - handovers0;
            System.out.printf("restart guard on virtual threads: 5 waiters on %s for %d ms; ticker %d ticks, largest gap %.1f ms;"
                + " %d handed to the core's wait%n", carriers, waitedMs, ticks.get(), maxGapNanos.get() / 1e6, handovers);
            assertTrue(carriers.size() <= 2, "carriers: " + carriers);
            assertEquals(0, handovers, "waits handed to the core's (native) wait");
            // Five waiters pinning two carriers would stop the ticker for the whole wait.
            assertTrue(waitedMs >= 500, "the guard let go after " + waitedMs + " ms: too soon to tell");
            assertTrue(maxGapNanos.get() < TimeUnit.MILLISECONDS.toNanos(waitedMs) / 2,
                "the ticker stalled " + maxGapNanos.get() / 1e6 + " ms of a " + waitedMs + " ms wait");
        } finally {
            done.set(true);
            ex.shutdown();
            assertTrue(ex.awaitTermination(30, TimeUnit.SECONDS));
        }
        return out;
    }
}
