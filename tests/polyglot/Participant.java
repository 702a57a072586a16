// The Java participant of the cross-language uniqueness run:
//
//   java -cp polyflake-0.1.0.jar:DIR Participant LEASE_DIR SECONDS OUT_PATH [uuidv7]
//
// A strict generator (default layout and epoch) on a file lease of LEASE_DIR (default slots,
// identity "java"; a LEASE_DIR of the form zk://HOST:PORT[,HOST:PORT]/PREFIX leases from that
// ZooKeeper ensemble under /PREFIX instead), waiting out the restart guard with waitReady() for up
// to 15 s; then single nextId() calls at full speed for SECONDS (the time is checked every 1,024
// IDs); then OUT_PATH gets them as raw little-endian u64 in issue order and OUT_PATH + ".json" a
// summary. With a 4th argument `uuidv7`: no lease (LEASE_DIR is ignored), single nextUuid() calls
// of a strict Uuid7Generator, written as 16 bytes big-endian each, the summary with "format":
// "uuidv7" and a null node_id. Exit 0 on success; any error: one line on stderr, exit 1.

import dev.polyflake.PolyflakeException;
import dev.polyflake.Snowflake;
import dev.polyflake.Uuid7Generator;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class Participant {
    private static final int CHECK_EVERY = 1024;

    private Participant() {}

    public static void main(String[] args) {
        try {
            run(args);
        } catch (PolyflakeException e) {
            fail(e.code() + ": " + e.getMessage());
        } catch (Exception e) {
            fail(String.valueOf(e));
        }
    }

    private static void fail(String message) {
        System.err.println("Participant.java: " + message.split("\n")[0]);
        System.exit(1);
    }

    private static void run(String[] args) throws IOException {
        if (!(args.length == 3 || (args.length == 4 && args[3].equals("uuidv7")))) {
            fail("usage: java Participant LEASE_DIR SECONDS OUT_PATH [uuidv7]");
        }
        double seconds = Double.parseDouble(args[1]);
        if (!(seconds >= 0)) {
            fail("SECONDS must be a number >= 0, got " + args[1]);
        }
        Path out = Path.of(args[2]);
        if (args.length == 4) {
            uuidv7(seconds, out);
            return;
        }
        Snowflake.Builder b = Snowflake.builder().identity("java");
        Matcher zk = Pattern.compile("^zk://([^/]+)(/.+)$").matcher(args[0]);
        if (zk.matches()) {
            b.zooKeeper(zk.group(1)).prefix(zk.group(2));
        } else if (args[0].startsWith("zk://")) {
            fail("LEASE_DIR \"" + args[0] + "\": expected zk://HOST:PORT[,HOST:PORT]/PREFIX");
        } else {
            b.fileLease(Path.of(args[0]));
        }
        long[] ids = new long[1 << 20];
        int count = 0;
        long nodeId;
        long elapsed;
        try (Snowflake g = b.build()) {
            g.waitReady(Duration.ofSeconds(15));
            nodeId = g.nodeId();
            long t0 = System.nanoTime();
            long end = t0 + (long) (seconds * 1e9);
            do {
                if (count + CHECK_EVERY > ids.length) {
                    ids = Arrays.copyOf(ids, ids.length * 2);
                }
                for (int i = 0; i < CHECK_EVERY; i++) {
                    ids[count++] = g.nextId();
                }
            } while (System.nanoTime() < end);
            elapsed = System.nanoTime() - t0;
        }
        ByteBuffer buf = ByteBuffer.allocate(count * 8).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++) {
            buf.putLong(ids[i]);
        }
        Files.write(out, buf.array());
        summary(out, String.valueOf(nodeId), count, elapsed, "\"" + ids[0] + "\"", "\"" + ids[count - 1] + "\"", "");
    }

    private static void uuidv7(double seconds, Path out) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(16 << 20);
        int count = 0;
        long elapsed;
        UUID first = null;
        UUID last = null;
        try (Uuid7Generator g = new Uuid7Generator()) {
            long t0 = System.nanoTime();
            long end = t0 + (long) (seconds * 1e9);
            do {
                if ((count + CHECK_EVERY) * 16 > buf.capacity()) {
                    ByteBuffer grown = ByteBuffer.allocate(buf.capacity() * 2);
                    buf.flip();
                    grown.put(buf);
                    buf = grown;
                }
                for (int i = 0; i < CHECK_EVERY; i++) {
                    last = g.nextUuid();
                    if (first == null) {
                        first = last;
                    }
                    buf.putLong(last.getMostSignificantBits()).putLong(last.getLeastSignificantBits());
                    count++;
                }
            } while (System.nanoTime() < end);
            elapsed = System.nanoTime() - t0;
        }
        Files.write(out, Arrays.copyOf(buf.array(), count * 16));
        summary(out, "null", count, elapsed, "\"" + value(first) + "\"", "\"" + value(last) + "\"", "\"format\": \"uuidv7\", ");
    }

    private static BigInteger value(UUID u) {
        return new BigInteger(1, ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits()).array());
    }

    private static void summary(Path out, String nodeId, int count, long elapsedNanos, String first, String last, String extra)
        throws IOException {
        String json = "{\"language\": \"java\", " + extra + "\"node_id\": " + nodeId + ", \"count\": " + count + ", \"seconds\": "
            + (elapsedNanos / 1e9) + ", \"first\": " + first + ", \"last\": " + last + "}\n";
        Files.write(Path.of(out + ".json"), json.getBytes(StandardCharsets.UTF_8));
    }
}
