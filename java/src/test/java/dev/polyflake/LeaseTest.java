package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Node ids leased from a directory of slot files, a real etcd (started here, Debian's
 * etcd-server), and a real ZooKeeper (tests/stores/with_zookeeper.sh, POLYFLAKE_TEST_ZOOKEEPER);
 * the Cleaner freeing a generator never closed.
 */
class LeaseTest {
    static Path tempDir(String what) throws IOException {
        return Files.createTempDirectory("polyflake-java-" + what + "-");
    }

    static Map<String, Object> lease(Snowflake g) {
        return g.health().lease().orElseThrow(() -> new AssertionError("no lease in health()"));
    }

    @Test
    void fileLeaseSlotsAreDistinctAndFreedAtClose() throws Exception {
        Path dir = tempDir("lease");
        try {
            Snowflake a = Snowflake.builder().fileLease(dir).slots(2).reserveMs(1000).build();
            Snowflake b = Snowflake.builder().fileLease(dir).slots(2).reserveMs(1000).build();
            assertNotEquals(a.nodeId(), b.nodeId());
            a.waitReady(Duration.ofSeconds(5));
            b.waitReady(Duration.ofSeconds(5));
            assertTrue(a.nextId() > 0 && b.nextId() > 0);
            Map<String, Object> l = lease(a);
            assertEquals("file", l.get("kind"));
            assertEquals(a.nodeId(), ((Number) l.get("slot")).longValue());
            assertEquals("file_lease", a.health().source());
            NoFreeSlotException full = assertThrows(NoFreeSlotException.class,
                () -> Snowflake.builder().fileLease(dir).slots(2).build());
            assertEquals(2, full.slots());
            assertTrue(full.dirOrPrefix().contains(dir.getFileName().toString()), full.dirOrPrefix());
            long freed = a.nodeId();
            a.close();
            try (Snowflake c = Snowflake.builder().fileLease(dir).slots(2).reserveMs(1000).build()) {
                assertEquals(freed, c.nodeId());
                // The restart guard: the slot's high-water mark is a's last ID; c waits past it.
                c.waitReady(Duration.ofSeconds(5));
                assertTrue(c.nextId() > 0);
                assertTrue(c.health().ok());
            }
            b.close();
        } finally {
            Support.deleteTree(dir);
        }
    }

    @Test
    void aGeneratorNeverClosedIsFreedByTheCleaner() throws Exception {
        Path dir = tempDir("cleaner");
        try {
            leaseAndDrop(dir);
            assertThrows(NoFreeSlotException.class, () -> Snowflake.builder().fileLease(dir).slots(1).build())
                .getMessage();
            // Now unreachable only through the dropped reference: the Cleaner frees its handle, and
            // dropping the core's generator frees its slot.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            Snowflake again = null;
            while (again == null) {
                System.gc();
                try {
                    again = Snowflake.builder().fileLease(dir).slots(1).build();
                } catch (NoFreeSlotException stillHeld) {
                    assertTrue(System.nanoTime() < deadline, "the slot was not freed within 30 s of GC");
                    Thread.sleep(20);
                }
            }
            again.close();
        } finally {
            Support.deleteTree(dir);
        }
    }

    /** A generator leasing the one slot of dir, left unreferenced and unclosed. */
    private static void leaseAndDrop(Path dir) {
        Snowflake g = Snowflake.builder().fileLease(dir).slots(1).build();
        assertEquals(0, g.nodeId());
    }

    // --- etcd: a real server on 127.0.0.1, free ports, a temporary data dir --------------------

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static boolean storeAvailable(String what, boolean present) {
        if (!present && Support.storesRequired()) {
            throw new AssertionError(what + " is required (POLYFLAKE_REQUIRE_STORES) but missing");
        }
        return present;
    }

    /** A real etcd on 127.0.0.1 (free ports, a temporary data dir), healthy; close() stops it. */
    static final class Etcd implements AutoCloseable {
        final Process process;
        final Path data;
        final String client;

        Etcd(Process process, Path data, String client) {
            this.process = process;
            this.data = data;
            this.client = client;
        }

        /** etcd started and healthy, or the test skipped where there is none (failed where required). */
        static Etcd start() throws Exception {
            File etcd = new File("/usr/bin/etcd");
            File etcdctl = new File("/usr/bin/etcdctl");
            assumeTrue(storeAvailable("etcd", etcd.canExecute() && etcdctl.canExecute()), "no etcd");
            Path data = tempDir("etcd");
            String client = "http://127.0.0.1:" + freePort();
            String peer = "http://127.0.0.1:" + freePort();
            Process p = new ProcessBuilder(etcd.getPath(), "--name", "polyflake-java-test", "--data-dir", data.resolve("data").toString(),
                "--listen-client-urls", client, "--advertise-client-urls", client, "--listen-peer-urls", peer,
                "--initial-advertise-peer-urls", peer, "--initial-cluster", "polyflake-java-test=" + peer)
                .redirectErrorStream(true).redirectOutput(data.resolve("etcd.log").toFile()).start();
            Etcd e = new Etcd(p, data, client);
            try {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (etcdctl(client, "endpoint", "health").exitValue != 0) {
                    assertTrue(System.nanoTime() < until && p.isAlive(), "etcd did not become healthy: "
                        + new String(Files.readAllBytes(data.resolve("etcd.log")), StandardCharsets.UTF_8));
                    Thread.sleep(50);
                }
                return e;
            } catch (Exception | AssertionError failed) {
                e.close();
                throw failed;
            }
        }

        @Override
        public void close() throws IOException {
            // Not InterruptedException (a try-with-resources resource should not throw it).
            process.destroyForcibly();
            boolean interrupted = false;
            while (process.isAlive()) {
                try {
                    process.waitFor();
                } catch (java.lang.InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            Support.deleteTree(data);
        }
    }

    @Test
    @SuppressWarnings("try") // closes a resource early to show its slot freed
    void etcdLease() throws Exception {
        try (Etcd server = Etcd.start()) {
            String client = server.client;
            List<String> endpoints = List.of(client);
            try (Snowflake a = Snowflake.builder().etcd(endpoints).prefix("/polyflake-java").slots(2).ttlSeconds(2).reserveMs(500)
                .connectTimeoutMs(2000).build();
                Snowflake b = Snowflake.builder().etcd(endpoints).prefix("/polyflake-java").slots(2).ttlSeconds(2).reserveMs(500)
                    .connectTimeoutMs(2000).build()) {
                assertNotEquals(a.nodeId(), b.nodeId());
                a.waitReady(Duration.ofSeconds(10));
                b.waitReady(Duration.ofSeconds(10));
                Set<Long> ids = new HashSet<>();
                for (int k = 0; k < 1000; k++) {
                    assertTrue(ids.add(a.nextId()) && ids.add(b.nextId()));
                }
                assertEquals("etcd", a.health().source());
                assertEquals("etcd", lease(a).get("kind"));
                String keys = etcdctl(client, "get", "--prefix", "--keys-only", "/polyflake-java/slot/").out;
                assertEquals(2, keys.lines().filter(l -> !l.isEmpty()).count(), "the slot keys are in etcd: " + keys);
                NoFreeSlotException full = assertThrows(NoFreeSlotException.class,
                    () -> Snowflake.builder().etcd(endpoints).prefix("/polyflake-java").slots(2).connectTimeoutMs(2000).build());
                assertEquals("NO_FREE_SLOT", full.code());
                a.close();
                // close() frees the slot: a successor takes it, waits past what a issued, issues.
                try (Snowflake c = Snowflake.builder().etcd(endpoints).prefix("/polyflake-java").slots(2).ttlSeconds(2)
                    .reserveMs(500).connectTimeoutMs(2000).identity("java-c").build()) {
                    assertEquals(a.nodeId(), c.nodeId());
                    c.waitReady(Duration.ofSeconds(10));
                    long id = c.nextId();
                    assertEquals(a.nodeId(), c.decode(id).nodeId());
                    assertTrue(!ids.contains(id));
                }
            }
            LeaseStoreException down = assertThrows(LeaseStoreException.class,
                () -> Snowflake.builder().etcd(List.of("http://127.0.0.1:" + freePort())).connectTimeoutMs(300).build());
            assertEquals("LEASE_STORE", down.code());
        }
    }

    static final class Ran {
        int exitValue;
        String out;
    }

    static Ran etcdctl(String endpoint, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/etcdctl", "--endpoints=" + endpoint, "--dial-timeout=1s", "--command-timeout=2s"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("ETCDCTL_API", "3");
        Process p = pb.start();
        Ran r = new Ran();
        r.out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        r.exitValue = p.waitFor();
        return r;
    }

    // --- ZooKeeper: the ensemble with_zookeeper.sh started ----------------------------------

    @Test
    @SuppressWarnings("try") // closes a resource early to show its slot freed
    void zooKeeperLease() throws Exception {
        String ensemble = System.getenv("POLYFLAKE_TEST_ZOOKEEPER");
        assumeTrue(storeAvailable("ZooKeeper (POLYFLAKE_TEST_ZOOKEEPER)", ensemble != null && !ensemble.isEmpty()), "no ZooKeeper");
        String prefix = "/polyflake-java-" + ProcessHandle.current().pid();
        try (Snowflake a = Snowflake.builder().zooKeeper(ensemble).prefix(prefix).slots(2).reserveMs(500).build();
            Snowflake b = Snowflake.builder().zooKeeper(ensemble).prefix(prefix).slots(2).reserveMs(500).build()) {
            assertNotEquals(a.nodeId(), b.nodeId());
            a.waitReady(Duration.ofSeconds(10));
            b.waitReady(Duration.ofSeconds(10));
            Set<Long> ids = new HashSet<>();
            for (int k = 0; k < 1000; k++) {
                assertTrue(ids.add(a.nextId()) && ids.add(b.nextId()));
            }
            assertEquals("zookeeper", a.health().source());
            assertEquals("zookeeper", lease(a).get("kind"));
            assertThrows(NoFreeSlotException.class, () -> Snowflake.builder().zooKeeper(ensemble).prefix(prefix).slots(2).build());
            long freed = a.nodeId();
            a.close();
            try (Snowflake c = Snowflake.builder().zooKeeper(ensemble).prefix(prefix).slots(2).reserveMs(500).build()) {
                assertEquals(freed, c.nodeId());
                c.waitReady(Duration.ofSeconds(10));
                assertTrue(!ids.contains(c.nextId()));
            }
        }
    }
}
