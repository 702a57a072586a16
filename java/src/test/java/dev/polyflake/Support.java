package dev.polyflake;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.stream.Stream;

/** Paths and helpers the tests share. */
final class Support {
    static final ObjectMapper JSON = new ObjectMapper();

    private Support() {}

    /** The repository root (set by the POM; the tests read the shared vectors there). */
    static Path root() {
        return Paths.get(System.getProperty("polyflake.root", "..")).toAbsolutePath().normalize();
    }

    static Path vectors() {
        return root().resolve("tests/vectors");
    }

    static JsonNode readJson(Path p) throws IOException {
        return JSON.readTree(p.toFile());
    }

    /** The cargo target directory (where the coverage record goes). */
    static Path targetDir() {
        String t = System.getenv("CARGO_TARGET_DIR");
        return t != null && !t.isEmpty() ? Paths.get(t) : root().resolve("target");
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** True when the make targets ask for every store test to run (absent stores then fail). */
    static boolean storesRequired() {
        return Boolean.parseBoolean(System.getProperty("polyflake.require.stores", "false"))
            || "true".equals(System.getenv("POLYFLAKE_REQUIRE_STORES"));
    }
}
