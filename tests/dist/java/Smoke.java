// The Java smoke test of `make test-dist` (tests/dist/java_guide.sh): compiled in a fresh Maven
// project against dev.polyflake:polyflake from a file-based repository, run with no Rust on PATH.
import dev.polyflake.ClockMovedBackwardsException;
import dev.polyflake.Decoded;
import dev.polyflake.ManualClock;
import dev.polyflake.Polyflake;
import dev.polyflake.Snowflake;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

public final class Smoke {
    private Smoke() {}

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    public static void main(String[] args) throws Exception {
        try (Snowflake g = new Snowflake(37)) {
            long id = g.nextId();
            Decoded d = g.decode(id);
            check(d.nodeId() == 37, "node id " + d);
            check(g.nextIds(10_000).length == 10_000, "batch");
            System.out.println("id " + id + " " + d);
        }
        ManualClock clock = new ManualClock(1_737_747_358_021L);
        try (Snowflake g = Snowflake.builder().nodeId(37).clock(clock).build()) {
            check(g.nextId() == 141264821508263936L, "the design literal");
            clock.advance(-600);
            try {
                g.nextId();
                check(false, "a 600 ms rewind was not refused");
            } catch (ClockMovedBackwardsException e) {
                check(e.code().equals("CLOCK_MOVED_BACKWARDS") && e.behindMs() == 600, e.getMessage());
                System.out.println("refused: " + e.code() + ": " + e.getMessage());
            }
        }
        Path dir = Files.createTempDirectory("polyflake-smoke");
        try (Snowflake a = Snowflake.builder().fileLease(dir).slots(4).build();
            Snowflake b = Snowflake.builder().fileLease(dir).slots(4).build()) {
            a.waitReady(Duration.ofSeconds(10));
            b.waitReady(Duration.ofSeconds(10));
            check(a.nodeId() != b.nodeId(), "two leases, one slot");
            check(a.nextId() != b.nextId(), "leased ids");
            System.out.println("leased node ids " + a.nodeId() + " and " + b.nodeId());
        }
        UUID u = Polyflake.uuid7();
        check(u.version() == 7, "uuid7 " + u);
        String ulid = Polyflake.ulid();
        check(ulid.length() == 26, "ulid " + ulid);
        System.out.println("uuid7 " + u + " ulid " + ulid + " version " + Polyflake.version());
    }
}
