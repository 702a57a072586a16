package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every scenario file in tests/vectors/scenarios/ (and the UUIDv7/ULID files of formats/) run
 * through the Java binding, each on the precise clock source and again on the coarse one. The
 * schema is tests/vectors/scenarios/README.md; an unknown op or key fails, as does a file not
 * run. Writes the coverage record tests/vectors/check_coverage.py reads ({@code java.txt}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ScenariosTest {
    static final Path DIR = Support.vectors().resolve("scenarios");
    static final Path FORMATS = DIR.resolve("formats");
    static final ClockSource[] SOURCES = {ClockSource.PRECISE, ClockSource.COARSE};
    /** What the JVM cannot offer (the schema's {@code needs}). */
    static final Map<String, String> NOT_APPLICABLE = Map.of("fork", "no fork() in the JVM");

    static final Map<String, String> COVERAGE = new java.util.concurrent.ConcurrentSkipListMap<>();

    static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".json")).sorted().collect(Collectors.toList());
        }
    }

    static Stream<Path> scenarioFiles() throws IOException {
        return files(DIR).stream();
    }

    static Stream<Path> formatFiles() throws IOException {
        return files(FORMATS).stream();
    }

    @Test
    @Order(0)
    void theDirectoriesHaveFiles() throws IOException {
        assertTrue(files(DIR).size() > 0, "no scenario files in " + DIR);
        assertTrue(files(FORMATS).size() > 0, "no format scenario files in " + FORMATS);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarioFiles")
    @Order(1)
    void scenario(Path file) throws Exception {
        Set<String> lines = new HashSet<>();
        for (ClockSource source : SOURCES) {
            lines.add(run(Support.readJson(file), file, source));
        }
        assertEquals(1, lines.size(), file + ": the two clock sources disagree: " + lines);
        String line = lines.iterator().next();
        COVERAGE.put(line.split(" ")[0], line);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formatFiles")
    @Order(2)
    void formatScenario(Path file) throws Exception {
        for (ClockSource source : SOURCES) {
            assertTrue(run(Support.readJson(file), file, source).endsWith(" ok"));
        }
    }

    @AfterAll
    static void writeCoverage() throws IOException {
        // Only a full run writes the record (a run of one test leaves the last full one).
        if (COVERAGE.size() != files(DIR).size()) {
            return;
        }
        Path out = Support.targetDir().resolve("scenario-coverage");
        Files.createDirectories(out);
        String text = COVERAGE.values().stream().map(l -> l + "\n").collect(Collectors.joining());
        Files.write(out.resolve("java.txt"), text.getBytes(StandardCharsets.UTF_8));
    }

    // ---- one scenario ----------------------------------------------------------------------

    static void onlyKeys(JsonNode obj, String where, String... allowed) {
        List<String> ok = Arrays.asList(allowed);
        for (Iterator<String> it = obj.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            assertTrue(ok.contains(k), "unknown key \"" + k + "\" in " + where);
        }
    }

    /** Scripted clock values: numbers, or runs {start, count, step, each}. */
    static long[] expand(JsonNode values, String where) {
        List<Long> out = new ArrayList<>();
        for (JsonNode v : values) {
            if (v.isNumber()) {
                out.add(v.asLong());
                continue;
            }
            onlyKeys(v, where + " run", "start", "count", "step", "each");
            long step = v.path("step").asLong(0);
            long each = v.path("each").asLong(1);
            for (long i = 0; i < v.get("count").asLong(); i++) {
                out.add(v.get("start").asLong() + step * (i / each));
            }
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    /** A generator made from a spec, and its manual clock (or null). */
    static final class Gen {
        final String name;
        Object gen;
        ManualClock clock;
        String format;
        BigInteger last = BigInteger.valueOf(-1);

        Gen(String name) {
            this.name = name;
        }

        void close() {
            if (gen instanceof AutoCloseable) {
                try {
                    ((AutoCloseable) gen).close();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        }
    }

    static Object[] make(JsonNode spec, String where, Path leaseDir, ClockSource source) {
        onlyKeys(spec, where, "mode", "node_id", "layout", "epoch_ms", "max_wait_ms", "max_lead_ms", "max_forward_step_ms",
            "forward_confirm_ms", "clock", "source", "deferred", "format");
        GeneratorBuilder<?> b;
        Snowflake.Builder sb = null;
        String format = spec.has("format") ? spec.get("format").asText() : null;
        if (format != null) {
            for (String k : new String[] {"node_id", "layout", "epoch_ms", "source"}) {
                assertTrue(!spec.has(k), where + ": " + k + " with a format");
            }
            if (format.equals("uuidv7")) {
                b = Uuid7Generator.builder();
            } else if (format.equals("ulid")) {
                b = UlidGenerator.builder();
            } else {
                throw new AssertionError("unknown format " + format + " in " + where);
            }
        } else {
            sb = Snowflake.builder();
            b = sb;
            if (spec.has("source")) {
                JsonNode s = spec.get("source");
                onlyKeys(s, where + ".source", "kind", "slots", "reserve_ms");
                assertEquals("file_lease", s.get("kind").asText(), where + ".source.kind");
                sb.fileLease(leaseDir);
                if (s.has("slots")) {
                    sb.slots(s.get("slots").asLong());
                }
                if (s.has("reserve_ms")) {
                    sb.reserveMs(s.get("reserve_ms").asLong());
                }
            } else {
                sb.nodeId(spec.get("node_id").asLong());
            }
            if (spec.has("layout")) {
                JsonNode l = spec.get("layout");
                sb.layout(l.isArray() ? Layout.of(l.get(0).asInt(), l.get(1).asInt(), l.get(2).asInt()) : Layout.named(l.asText()));
            }
            if (spec.has("epoch_ms")) {
                sb.epochMs(spec.get("epoch_ms").asLong());
            }
        }
        switch (spec.path("mode").asText("strict")) {
            case "strict":
                b.mode(Mode.STRICT);
                break;
            case "monotonic":
                b.mode(Mode.MONOTONIC);
                break;
            default:
                throw new AssertionError("unknown mode in " + where);
        }
        if (spec.has("max_wait_ms")) {
            b.maxWaitMs(spec.get("max_wait_ms").asDouble());
        }
        if (spec.has("max_lead_ms")) {
            b.maxLeadMs(spec.get("max_lead_ms").asLong());
        }
        if (spec.has("max_forward_step_ms")) {
            if (spec.get("max_forward_step_ms").isNull()) {
                b.noForwardStepCheck();
            } else {
                b.maxForwardStepMs(spec.get("max_forward_step_ms").asLong());
            }
        }
        if (spec.has("forward_confirm_ms")) {
            b.forwardConfirmMs(spec.get("forward_confirm_ms").asLong());
        }
        b.clockSource(source);
        ManualClock manual = null;
        if (spec.has("clock")) {
            JsonNode c = spec.get("clock");
            String kind = c.get("kind").asText();
            if (kind.equals("manual")) {
                onlyKeys(c, where + ".clock", "kind", "start_ms");
                manual = new ManualClock(c.get("start_ms").asLong());
                b.clock(manual);
            } else if (kind.equals("scripted")) {
                onlyKeys(c, where + ".clock", "kind", "values");
                b.clock(new ScriptedClock(expand(c.get("values"), where + ".clock")));
            } else {
                throw new AssertionError("unknown clock kind " + kind + " in " + where);
            }
        }
        Object gen;
        if (format == null) {
            gen = sb.build();
        } else if (format.equals("uuidv7")) {
            gen = ((Uuid7Generator.Builder) b).build();
        } else {
            gen = ((UlidGenerator.Builder) b).build();
        }
        return new Object[] {gen, manual, format};
    }

    static PolyflakeException expectError(Runnable call, String code, String where) {
        try {
            call.run();
        } catch (PolyflakeException e) {
            assertEquals(code, e.code(), where + ": " + e.getMessage());
            return e;
        }
        throw new AssertionError(where + ": expected " + code + ", but the call succeeded");
    }

    static String run(JsonNode sc, Path file, ClockSource source) throws IOException {
        onlyKeys(sc, file.toString(), "name", "description", "source", "needs", "generators", "steps");
        String name = sc.get("name").asText();
        assertEquals(file.getFileName().toString().replace(".json", ""), name, "name = file name");
        for (JsonNode need : sc.path("needs")) {
            String reason = NOT_APPLICABLE.get(need.asText());
            assertNotNull(reason, file + ": unknown need " + need);
            return name + " not-applicable: " + reason;
        }
        Path leaseDir = Files.createTempDirectory("polyflake-scenario-" + name + "-");
        Map<String, Gen> gens = new LinkedHashMap<>();
        try {
            steps(sc, gens, leaseDir, source);
        } finally {
            for (Gen g : gens.values()) {
                g.close();
            }
            Support.deleteTree(leaseDir);
        }
        return name + " ok";
    }

    static final String[] ID_EXPECT = {"error", "ids", "sequences", "max_sequence", "first", "last", "increasing"};
    static final String[] HEALTH_EXPECT = {"ok", "status", "lead_ms", "ids_issued", "rewinds_waited", "rewinds_refused",
        "sequence_exhaustions", "wait_sleeps", "ms_borrowed", "lead_refused", "clock_ahead_ms", "forward_refused"};

    static BigInteger u128(UUID u) {
        return new BigInteger(1, java.nio.ByteBuffer.allocate(16).putLong(u.getMostSignificantBits())
            .putLong(u.getLeastSignificantBits()).array());
    }

    static BigInteger u128(long[] halves) {
        return new BigInteger(1, java.nio.ByteBuffer.allocate(16).putLong(halves[0]).putLong(halves[1]).array());
    }

    static Map<String, Object> decoded(Decoded d) {
        Map<String, Object> m = new HashMap<>();
        m.put("timestamp_ms", d.timestampMs());
        m.put("node_id", d.nodeId());
        m.put("sequence", d.sequence());
        return m;
    }

    static Map<String, Object> want(JsonNode n) {
        Map<String, Object> m = new HashMap<>();
        n.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().asLong()));
        return m;
    }

    static void steps(JsonNode sc, Map<String, Gen> gens, Path leaseDir, ClockSource source) {
        String scName = sc.get("name").asText();
        JsonNode specs = sc.get("generators");
        java.util.function.Consumer<String> create = name -> {
            Gen g = new Gen(name);
            gens.put(name, g);
            Object[] made = make(specs.get(name), "generators." + name, leaseDir, source);
            g.gen = made[0];
            g.clock = (ManualClock) made[1];
            g.format = (String) made[2];
            if (g.format == null && source == ClockSource.PRECISE) {
                assertEquals(ClockSource.PRECISE, ((Snowflake) g.gen).clockSource());
            }
        };
        specs.fields().forEachRemaining(e -> {
            if (!e.getValue().path("deferred").asBoolean(false)) {
                create.accept(e.getKey());
            }
        });
        Set<BigInteger> seen = new HashSet<>();
        int i = 0;
        for (JsonNode step : sc.get("steps")) {
            String op = step.get("op").asText();
            String where = scName + " step " + i++ + " (" + op + ", " + source + ")";
            onlyKeys(step, where, "op", "gen", "count", "id", "ms", "config", "expect", "within_ms");
            JsonNode expect = step.path("expect");
            Gen g = step.has("gen") ? gens.get(step.get("gen").asText()) : null;
            if (step.has("gen") && !op.equals("create")) {
                assertNotNull(g, where + ": unknown generator " + step.get("gen"));
            }
            long t0 = System.nanoTime();
            switch (op) {
                case "next_id":
                case "next_ids": {
                    onlyKeys(expect, where + " expect", ID_EXPECT);
                    int count = step.path("count").asInt(1);
                    String error = expect.has("error") ? expect.get("error").asText() : null;
                    List<BigInteger> ids = new ArrayList<>();
                    List<Long> ms = new ArrayList<>();
                    List<Long> raw = new ArrayList<>();
                    if (op.equals("next_id")) {
                        int calls = error != null ? count - 1 : count;
                        for (int k = 0; k < calls; k++) {
                            one(g, ids, ms, raw);
                        }
                        if (error != null) {
                            expectError(() -> one(g, new ArrayList<>(), new ArrayList<>(), new ArrayList<>()), error, where);
                        }
                    } else if (error != null) {
                        expectError(() -> batch(g, count, new ArrayList<>(), new ArrayList<>(), new ArrayList<>()), error, where);
                    } else {
                        batch(g, count, ids, ms, raw);
                    }
                    for (BigInteger id : ids) {
                        assertTrue(seen.add(id), where + ": duplicate ID " + id);
                        assertTrue(id.compareTo(g.last) > 0, where + ": " + id + " does not increase past " + g.last);
                        g.last = id;
                    }
                    if (g.format != null) {
                        onlyKeys(expect, where + " expect (a format)", "error", "first", "last", "increasing");
                        if (expect.has("first")) {
                            assertEquals(want(expect.get("first")), Map.of("timestamp_ms", ms.get(0)), where + ": first");
                        }
                        if (expect.has("last")) {
                            assertEquals(want(expect.get("last")), Map.of("timestamp_ms", ms.get(ms.size() - 1)), where + ": last");
                        }
                        break;
                    }
                    Snowflake s = (Snowflake) g.gen;
                    if (expect.has("ids")) {
                        List<BigInteger> w = new ArrayList<>();
                        expect.get("ids").forEach(x -> w.add(new BigInteger(x.asText())));
                        assertEquals(w, ids, where + ": ids");
                    }
                    List<Decoded> dec = raw.stream().map(s::decode).collect(Collectors.toList());
                    if (expect.has("sequences")) {
                        List<Long> w = new ArrayList<>();
                        expect.get("sequences").forEach(x -> w.add(x.asLong()));
                        assertEquals(w, dec.stream().map(Decoded::sequence).collect(Collectors.toList()), where + ": sequences");
                    }
                    if (expect.has("max_sequence")) {
                        assertEquals(expect.get("max_sequence").asLong(), dec.stream().mapToLong(Decoded::sequence).max().getAsLong(),
                            where + ": max_sequence");
                    }
                    if (expect.has("first")) {
                        assertEquals(want(expect.get("first")), decoded(dec.get(0)), where + ": first");
                    }
                    if (expect.has("last")) {
                        assertEquals(want(expect.get("last")), decoded(dec.get(dec.size() - 1)), where + ": last");
                    }
                    if (expect.has("increasing")) {
                        assertTrue(expect.get("increasing").asBoolean(), where + ": only increasing: true is defined");
                        for (int k = 1; k < ids.size(); k++) {
                            assertTrue(ids.get(k).compareTo(ids.get(k - 1)) > 0, where + ": not increasing at " + k);
                        }
                    }
                    break;
                }
                case "decode": {
                    onlyKeys(expect, where + " expect", "decoded");
                    long id = Long.parseLong(step.get("id").asText());
                    assertEquals(want(expect.get("decoded")), decoded(((Snowflake) g.gen).decode(id)), where);
                    break;
                }
                case "health": {
                    onlyKeys(expect, where + " expect", HEALTH_EXPECT);
                    Health h = g.gen instanceof Snowflake ? ((Snowflake) g.gen).health() : ((TimeIdGenerator) g.gen).health();
                    expect.fields().forEachRemaining(e -> {
                        Object got = h.get(e.getKey());
                        JsonNode w = e.getValue();
                        if (w.isObject()) {
                            onlyKeys(w, where + " " + e.getKey(), "min", "max");
                            long v = ((Number) got).longValue();
                            if (w.has("min")) {
                                assertTrue(v >= w.get("min").asLong(), where + ": " + e.getKey() + " = " + v + " < " + w.get("min"));
                            }
                            if (w.has("max")) {
                                assertTrue(v <= w.get("max").asLong(), where + ": " + e.getKey() + " = " + v + " > " + w.get("max"));
                            }
                        } else if (w.isBoolean()) {
                            assertEquals(w.asBoolean(), got, where + ": health." + e.getKey() + " (" + h + ")");
                        } else if (w.isTextual()) {
                            assertEquals(w.asText(), got, where + ": health." + e.getKey() + " (" + h + ")");
                        } else {
                            assertEquals(w.asLong(), ((Number) got).longValue(), where + ": health." + e.getKey() + " (" + h + ")");
                        }
                    });
                    break;
                }
                case "clock_set":
                case "clock_advance":
                case "clock_elapse": {
                    assertNotNull(g.clock, where + ": " + g.name + " has no manual clock");
                    long v = step.get("ms").asLong();
                    if (op.equals("clock_set")) {
                        g.clock.set(v);
                    } else if (op.equals("clock_advance")) {
                        g.clock.advance(v);
                    } else {
                        g.clock.elapse(v);
                    }
                    break;
                }
                case "construct": {
                    onlyKeys(expect, where + " expect", "error", "ok");
                    if (expect.has("error")) {
                        expectError(() -> make(step.get("config"), where, leaseDir, source), expect.get("error").asText(), where);
                    } else {
                        assertTrue(expect.path("ok").asBoolean(false), where + ": expect ok: true or an error");
                        Gen made = new Gen("construct");
                        made.gen = make(step.get("config"), where, leaseDir, source)[0];
                        made.close();
                    }
                    break;
                }
                case "create": {
                    onlyKeys(expect, where + " expect", "error");
                    String name = step.get("gen").asText();
                    assertTrue(specs.path(name).path("deferred").asBoolean(false) && g == null,
                        where + ": " + name + " is not a deferred generator yet to make");
                    if (expect.has("error")) {
                        expectError(() -> create.accept(name), expect.get("error").asText(), where);
                    } else {
                        create.accept(name);
                    }
                    break;
                }
                case "close": {
                    assertTrue(step.path("expect").isMissingNode(), where + ": close expects nothing");
                    g.close();
                    break;
                }
                default:
                    fail(where + ": unknown op " + op);
            }
            if (step.has("within_ms")) {
                double took = (System.nanoTime() - t0) / 1e6;
                assertTrue(took <= step.get("within_ms").asDouble(), where + ": took " + took + " ms, more than " + step.get("within_ms"));
            }
        }
    }

    /** One ID from g: its 128-bit value for the checks, its ms (formats) or raw long (Snowflake). */
    static void one(Gen g, List<BigInteger> ids, List<Long> ms, List<Long> raw) {
        if (g.gen instanceof Snowflake) {
            long id = ((Snowflake) g.gen).nextId();
            ids.add(BigInteger.valueOf(id));
            raw.add(id);
        } else if (g.gen instanceof Uuid7Generator) {
            UUID u = ((Uuid7Generator) g.gen).nextUuid();
            ids.add(u128(u));
            ms.add(Uuid7Generator.timestampMs(u));
        } else {
            String u = ((UlidGenerator) g.gen).nextUlid();
            ids.add(u128(UlidGenerator.parse(u)));
            ms.add(UlidGenerator.timestampMs(u));
        }
    }

    /** A batch (Snowflake: one nextIds call; the formats have no batch call in Java: one by one). */
    static void batch(Gen g, int count, List<BigInteger> ids, List<Long> ms, List<Long> raw) {
        if (g.gen instanceof Snowflake) {
            long[] got = ((Snowflake) g.gen).nextIds(count);
            assertEquals(count, got.length);
            for (long id : got) {
                ids.add(BigInteger.valueOf(id));
                raw.add(id);
            }
        } else {
            for (int k = 0; k < count; k++) {
                one(g, ids, ms, raw);
            }
        }
    }
}
