package dev.polyflake;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

/**
 * A holder of a fixed node id in a JVM of its own, for the tests that hand a node id between
 * processes (StaticGuardTest, ClockSyncTest). Environment: {@code NODE}, {@code MODE}
 * ({@code strict} | {@code monotonic}), {@code STATE} (the state directory), {@code RESERVE},
 * {@code LAYOUT} ({@code T,N,S}), {@code OUT} (its IDs, as big-endian longs), {@code BURST} (a batch minted first: a monotonic
 * holder runs ahead by it), {@code COUNT} (IDs one by one), {@code MS} (mint for this long
 * instead), {@code RETRY} (retry the build while the node id is in use, saying {@code TRYING}
 * once), {@code START=go} (say {@code UP}, then wait for a line on stdin before the build),
 * {@code HOLD} (wait for a line on stdin before the end), {@code END}: {@code close},
 * {@code exit} ({@code System.exit} with the generator open) or {@code hang} (until killed, or
 * until its stdin closes).
 * With {@code SYNC} set it answers each {@code check} line on stdin instead (ClockSyncTest).
 * It says what happened on stdout, one line per step.
 */
public final class Holder {
    private static final BufferedReader STDIN = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

    private Holder() {}

    static String env(String name, String otherwise) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? otherwise : v;
    }

    static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        if (System.getenv("SYNC") != null) {
            sync();
            return;
        }
        long node = Long.parseLong(env("NODE", "0"));
        String[] bits = env("LAYOUT", "41,10,12").split(",");
        Snowflake.Builder b = Snowflake.builder().nodeId(node)
            .layout(Layout.of(Integer.parseInt(bits[0]), Integer.parseInt(bits[1]), Integer.parseInt(bits[2])))
            .mode("monotonic".equals(env("MODE", "strict")) ? Mode.MONOTONIC : Mode.STRICT)
            .maxLeadMs(60_000)
            .restartGuard(RestartGuard.REQUIRED)
            .stateDir(Path.of(env("STATE", "")))
            .reserveMs(Long.parseLong(env("RESERVE", "5000")));
        if ("go".equals(env("START", ""))) {
            // Started ahead of time (a JVM takes a second or more to start): build when told.
            say("UP");
            STDIN.readLine();
        }
        long until = System.nanoTime() + 20_000_000_000L;
        boolean said = false;
        Snowflake g;
        while (true) {
            try {
                g = b.build();
                break;
            } catch (NodeIdInUseException e) {
                if (!"1".equals(env("RETRY", "")) || System.nanoTime() > until) {
                    throw e;
                }
                if (!said) {
                    say("TRYING holder_pid=" + e.holderPid() + " holder=" + e.holder());
                    said = true;
                }
                Thread.sleep(0, 200_000);
            }
        }
        long t0 = System.nanoTime(); // the first ID's wait counts from the health below
        Health h = g.health();
        long guard = h.lease().map(l -> ((Number) l.get("guard_remaining_ms")).longValue()).orElse(-1L);
        Object guardUntil = h.lease().map(l -> l.get("guard_until_ms")).orElse(null);
        say("READY node=" + g.nodeId() + " status=" + h.status() + " guard_remaining_ms=" + guard + " guard_until_ms=" + guardUntil
            + " core_ms=" + h.wallMs()
            + " java_ms=" + System.currentTimeMillis());
        long count = Long.parseLong(env("COUNT", "0"));
        long ms = Long.parseLong(env("MS", "0"));
        int burst = Integer.parseInt(env("BURST", "0"));
        String refused = "";
        long firstNanos = -1;
        long firstMs = -1;
        long firstJava = -1;
        long n = 0;
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(env("OUT", "")), 1 << 16))) {
            if (burst > 0) {
                for (long id : g.nextIds(burst)) {
                    out.writeLong(id);
                }
                firstNanos = System.nanoTime() - t0;
            }
            long end = System.nanoTime() + ms * 1_000_000L;
            while (n < count || System.nanoTime() < end) {
                try {
                    long id = g.nextId();
                    out.writeLong(id);
                    if (firstMs < 0) {
                        firstMs = g.decode(id).timestampMs();
                        firstJava = System.currentTimeMillis();
                    }
                } catch (PolyflakeException e) {
                    refused = " REFUSED " + e.code() + " " + e.getMessage();
                    break;
                }
                if (firstNanos < 0) {
                    firstNanos = System.nanoTime() - t0;
                }
                n++;
            }
        }
        h = g.health();
        say("DONE first_ms=" + (firstNanos < 0 ? -1 : firstNanos / 1_000_000) +  " first_id_ms=" + firstMs + " first_java_ms=" + firstJava + " status=" + h.status() + " waits=" + h.restartWaits() + refused);
        if ("1".equals(env("HOLD", ""))) {
            STDIN.readLine();
        }
        switch (env("END", "close")) {
            case "exit":
                System.exit(0); // with the generator open: the exit leaves a clean mark
                break;
            case "hang":
                // Until killed; or, should the test's JVM die first (its end of stdin closes),
                // at once, so that no holder outlives its test.
                while (STDIN.readLine() != null) {
                    continue;
                }
                Runtime.getRuntime().halt(3);
                break;
            default:
                g.close();
        }
    }

    /**
     * A generator bound to 50 ms of clock error and one without a bound, answering each
     * {@code check} with what each does now.
     */
    static void sync() throws IOException {
        Snowflake bound = Snowflake.builder().nodeId(Long.parseLong(env("NODE", "970"))).maxClockErrorMs(50).build();
        Snowflake free = Snowflake.builder().nodeId(Long.parseLong(env("NODE", "970")) + 1).build();
        for (String line = STDIN.readLine(); "check".equals(line); line = STDIN.readLine()) {
            Health h = bound.health();
            String boundSays;
            try {
                bound.nextId();
                boundSays = "ID";
            } catch (ClockUnsynchronizedException e) {
                boundSays = e.code() + " node_id=" + e.nodeId() + " max_error_us=" + e.maxErrorUs() + " cause=[" + e.cause() + "]";
            }
            String freeSays;
            try {
                free.nextId();
                freeSays = "ID";
            } catch (PolyflakeException e) {
                freeSays = "REFUSED " + e.code();
            }
            Map<String, Object> sync = h.clockSync();
            say("ANSWER bound=" + boundSays + " free=" + freeSays + " status=" + h.status() + " state=" + sync.get("state")
                + " max_error_us=" + sync.get("max_error_us") + " synchronized=" + sync.get("synchronized"));
        }
        bound.close();
        free.close();
    }
}
