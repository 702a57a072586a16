package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code heal(true)}: a lease the store stops vouching for (its slot file deleted, its etcd lease
 * revoked) takes a new slot by itself and goes on issuing, no ID repeated, its counters going on;
 * without it (the default) the lease stays lost.
 */
class HealTest {
    /** IDs minted before a loss, and after a heal. */
    static final int BEFORE = 2_000;
    static final int AFTER = 2_000;

    /** Mint n IDs into ids, each one new. */
    static void mint(Snowflake g, Set<Long> ids, int n) {
        for (int k = 0; k < n; k++) {
            long id = g.nextId();
            assertTrue(ids.add(id), "an ID issued twice: " + id);
        }
    }

    /**
     * Mint (never waiting) until g shows its lease lost: LeaseLostException, or health no longer
     * ok (lease_lost, then restart_guard while a heal's new slot waits). Every ID minted is new.
     *
     * @return the statuses seen
     */
    static Set<String> mintUntilLost(Snowflake g, Set<Long> ids, Duration within) {
        Set<String> seen = new TreeSet<>();
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            try {
                OptionalLong id = g.tryNextId();
                if (id.isPresent()) {
                    assertTrue(ids.add(id.getAsLong()), "an ID issued twice: " + id.getAsLong());
                }
            } catch (LeaseLostException lost) {
                seen.add("LEASE_LOST thrown");
            }
            String status = g.health().status();
            if (!"ok".equals(status)) {
                seen.add(status);
            }
            if (!seen.isEmpty()) {
                return seen;
            }
            assertTrue(System.nanoTime() < deadline, "the lease was not seen lost within " + within);
        }
    }

    /**
     * g (heal on, ready, minted BEFORE IDs into ids) loses its lease by lose; it heals: waitReady
     * waits through the heal, it mints AFTER more, none repeated, ids_issued counting them all.
     */
    static void healsAfter(Snowflake g, Set<Long> ids, ThrowingRunnable lose, Duration ready) throws Exception {
        long before = g.health().idsIssued();
        assertTrue(before >= BEFORE, "ids_issued " + before);
        lose.run();
        Set<String> seen = mintUntilLost(g, ids, Duration.ofSeconds(10));
        // Waits through the loss and the new slot's restart guard (without heal: LeaseLost at once).
        long start = System.nanoTime();
        g.waitReady(ready);
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        Health h = g.health();
        assertTrue(h.ok(), "healed but " + h.status() + ": " + h.reason() + " (seen: " + seen + ")");
        assertEquals(g.nodeId(), ((Number) LeaseTest.lease(g).get("slot")).longValue());
        assertFalse((Boolean) LeaseTest.lease(g).get("lost"));
        int had = ids.size();
        mint(g, ids, AFTER);
        assertEquals(had + AFTER, ids.size());
        long last = g.nextId();
        assertTrue(ids.add(last));
        assertEquals(g.nodeId(), g.decode(last).nodeId(), "the node id is the new slot's");
        // The same generator: its counters go on past the heal.
        long issued = g.health().idsIssued();
        assertTrue(issued >= ids.size(), "ids_issued " + issued + " < " + ids.size() + " minted (before the loss: " + before + ")");
        System.out.println("healed: seen " + seen + ", waitReady " + waitedMs + " ms, node id " + g.nodeId() + ", " + ids.size()
            + " IDs, ids_issued " + issued);
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    static Path slotFile(Path dir, long slot) {
        return dir.resolve(String.format("slot-%04d", slot));
    }

    @Test
    void aFileLeaseWhoseSlotFileIsDeletedHeals() throws Exception {
        Path dir = LeaseTest.tempDir("heal");
        try (Snowflake g = Snowflake.builder().fileLease(dir).slots(2).reserveMs(500).heal(true).build()) {
            g.waitReady(Duration.ofSeconds(5));
            Set<Long> ids = new HashSet<>();
            mint(g, ids, BEFORE);
            Path slot = slotFile(dir, g.nodeId());
            assertTrue(Files.exists(slot), "no slot file " + slot);
            healsAfter(g, ids, () -> Files.delete(slot), Duration.ofSeconds(10));
            // And again: a healed lease heals once more.
            mint(g, ids, BEFORE);
            Path again = slotFile(dir, g.nodeId());
            healsAfter(g, ids, () -> Files.delete(again), Duration.ofSeconds(10));
        } finally {
            Support.deleteTree(dir);
        }
    }

    @Test
    void withoutHealADeletedSlotFileStaysLost() throws Exception {
        Path dir = LeaseTest.tempDir("noheal");
        try (Snowflake g = Snowflake.builder().fileLease(dir).slots(2).reserveMs(500).build()) {
            g.waitReady(Duration.ofSeconds(5));
            Set<Long> ids = new HashSet<>();
            mint(g, ids, BEFORE);
            long node = g.nodeId();
            Files.delete(slotFile(dir, node));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (true) {
                try {
                    g.tryNextId().ifPresent(id -> assertTrue(ids.add(id), "an ID issued twice: " + id));
                } catch (LeaseLostException lost) {
                    break;
                }
                assertTrue(System.nanoTime() < deadline, "the lease was not seen lost within 5 s");
            }
            Thread.sleep(1_000);
            LeaseLostException e = assertThrows(LeaseLostException.class, g::nextId);
            assertEquals("LEASE_LOST", e.code());
            assertEquals("lease_lost", g.health().status());
            assertTrue((Boolean) LeaseTest.lease(g).get("lost"));
            // waitReady does not wait for a heal that will not come.
            long start = System.nanoTime();
            assertThrows(LeaseLostException.class, () -> g.waitReady(Duration.ofSeconds(5)));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2), "waitReady waited on a lease that does not heal");
            assertEquals(node, g.nodeId());
        } finally {
            Support.deleteTree(dir);
        }
    }

    @Test
    void healIsALeaseOption() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
            () -> Snowflake.builder().nodeId(1).heal(true).build());
        assertTrue(e.getMessage().contains("heal"), e.getMessage());
    }

    @Test
    void anEtcdLeaseRevokedHeals() throws Exception {
        try (LeaseTest.Etcd server = LeaseTest.Etcd.start();
            Snowflake g = Snowflake.builder().etcd(List.of(server.client)).prefix("/polyflake-java-heal").slots(2).ttlSeconds(2)
                .reserveMs(500).connectTimeoutMs(2000).heal(true).build()) {
            g.waitReady(Duration.ofSeconds(10));
            Set<Long> ids = new HashSet<>();
            mint(g, ids, BEFORE);
            healsAfter(g, ids, () -> revokeAll(server.client), Duration.ofSeconds(15));
        }
    }

    /** Revoke every lease of the etcd at client (this test's own: one generator's). */
    static void revokeAll(String client) throws Exception {
        LeaseTest.Ran list = LeaseTest.etcdctl(client, "lease", "list");
        assertEquals(0, list.exitValue, list.out);
        List<String> leases = new ArrayList<>();
        list.out.lines().map(String::trim).filter(l -> l.matches("[0-9a-f]+")).forEach(leases::add);
        assertFalse(leases.isEmpty(), "no etcd lease to revoke: " + list.out);
        for (String id : leases) {
            LeaseTest.Ran r = LeaseTest.etcdctl(client, "lease", "revoke", id);
            assertEquals(0, r.exitValue, r.out);
        }
    }
}
