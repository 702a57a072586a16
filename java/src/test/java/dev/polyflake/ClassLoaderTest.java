package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The library loaded by two class loaders in one JVM (an application server's two deployments,
 * a plugin system): each loader extracts the native library from the jar's resources to a file
 * of its own and loads it, so the JVM holds two copies of the core, each with its own table of
 * node ids. The host-wide claim still keeps one live generator per node id (the second copy is
 * refused, naming this process), and the mark carries what one copy issued to the next, a
 * monotonic lead included: zero of 100,000 IDs repeated.
 */
class ClassLoaderTest {
    /** A class loader of its own for this package (the test and main classes, none of this JVM's). */
    static URLClassLoader loader() throws Exception {
        URL main = Snowflake.class.getProtectionDomain().getCodeSource().getLocation();
        URL test = OtherLoader.class.getProtectionDomain().getCodeSource().getLocation();
        return new URLClassLoader(new URL[] {test, main}, ClassLoader.getPlatformClassLoader());
    }

    /** OtherLoader's static method {@code name} in {@code loader}'s copy of the package. */
    static Object call(ClassLoader loader, String name, Object... args) throws Exception {
        Class<?> c = Class.forName(OtherLoader.class.getName(), true, loader);
        assertTrue(c != OtherLoader.class, "the loader shares this JVM's classes");
        for (Method m : c.getMethods()) {
            if (m.getName().equals(name)) {
                return m.invoke(null, args);
            }
        }
        throw new NoSuchMethodException(name);
    }

    /** The copies of the native library this JVM has mapped (Native extracts each to a temp file). */
    static Set<String> copies() throws IOException {
        Set<String> out = new TreeSet<>();
        for (String line : Files.readAllLines(Paths.get("/proc/self/maps"), StandardCharsets.UTF_8)) {
            int at = line.indexOf('/');
            if (at >= 0 && line.contains("libpolyflake_java.so")) {
                out.add(line.substring(at));
            }
        }
        return out;
    }

    /** A monotonic generator in a loader of its own, run 100 ms ahead of its clock (409,600 IDs at once). */
    static long[] runAhead(URLClassLoader a, long node, Path state) throws Exception {
        AutoCloseable g = (AutoCloseable) call(a, "open", node, state.toString(), true);
        long[] ids = (long[]) call(a, "mint", g, 409_600, true);
        assertTrue(((Number) call(a, "health", g, "lead_ms")).longValue() > 0, "not ahead");
        return ids;
    }

    @Test
    void aSecondClassLoaderTakesOverAboveTheFirst() throws Exception {
        Path state = Files.createTempDirectory("polyflake-java-loaders-");
        Native.ensureLoaded();
        Set<String> before = copies();
        try (URLClassLoader a = loader(); URLClassLoader b = loader()) {
            AutoCloseable ga = (AutoCloseable) call(a, "open", 950L, state.toString(), true);
            long[] ahead = (long[]) call(a, "mint", ga, 409_600, true);
            // While A holds node 950, B (another copy of the core) is refused naming this process.
            String refused = (String) call(b, "tryOpen", 950L, state.toString());
            long pid = ProcessHandle.current().pid();
            assertTrue(refused.startsWith("NODE_ID_IN_USE|" + pid + "|this process (" + pid), refused);
            // And so is this JVM's own copy.
            NodeIdInUseException e = org.junit.jupiter.api.Assertions.assertThrows(NodeIdInUseException.class,
                () -> Snowflake.builder().nodeId(950).stateDir(state).build());
            assertTrue(e.holder().startsWith("this process"), e.holder());
            assertEquals(pid, e.holderPid());
            Set<String> added = copies();
            added.removeAll(before);
            assertEquals(2, added.size(), "each loader loads its own copy: " + added);
            ga.close();
            AutoCloseable gb = (AutoCloseable) call(b, "open", 950L, state.toString(), false);
            long[] after = (long[]) call(b, "mint", gb, 100_000, false);
            gb.close();
            assertEquals(0, StaticGuardTest.duplicates(ahead, after));
            assertTrue(StaticGuardTest.min(after) > StaticGuardTest.max(ahead), "B started under A's lead");
        } finally {
            Support.deleteTree(state);
        }
    }

    @Test
    void aClassLoaderDroppedWithItsGeneratorOpenHandsItOn() throws Exception {
        // A's generator is left open and A is dropped: A's Cleaner frees the generator (a clean
        // close) once it is unreachable; B, retrying, takes the node id above A's lead.
        Path state = Files.createTempDirectory("polyflake-java-loaders-");
        try (URLClassLoader b = loader()) {
            long[] ahead = leaveOpen(state);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            String got;
            while (!(got = (String) call(b, "tryOpen", 951L, state.toString())).startsWith("built")) {
                assertTrue(System.nanoTime() < deadline, "A's generator was not freed within 30 s of GC: " + got);
                System.gc();
                Thread.sleep(20);
            }
            AutoCloseable gb = (AutoCloseable) call(b, "open", 951L, state.toString(), false);
            long[] after = (long[]) call(b, "mint", gb, 100_000, false);
            gb.close();
            assertEquals(0, StaticGuardTest.duplicates(ahead, after));
            assertTrue(StaticGuardTest.min(after) > StaticGuardTest.max(ahead), "B started under A's lead");
        } finally {
            Support.deleteTree(state);
        }
    }

    /** A loader whose generator runs ahead and is left open, both unreachable on return. */
    private static long[] leaveOpen(Path state) throws Exception {
        URLClassLoader a = loader();
        long[] ahead = runAhead(a, 951, state);
        a.close(); // its jar files; the classes and the generator stay until collected
        return ahead;
    }
}
