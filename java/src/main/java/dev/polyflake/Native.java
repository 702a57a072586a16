package dev.polyflake;

import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.Cleaner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Map;

/**
 * The JNI library: loaded once, at first use, from inside the jar
 * ({@code dev/polyflake/native/<platform>/}), or from the file the system property
 * {@code polyflake.library} names. Handles are freed by {@link #CLEANER} once their Java object
 * is unreachable.
 */
final class Native {
    /** Frees the native handles of generators and clocks nobody references any more. */
    static final Cleaner CLEANER = Cleaner.create();

    /** Why the library could not be loaded, or null once it is. */
    private static final String LOAD_ERROR = load();

    private Native() {}

    /** This machine as the jar's directories name platforms: {@code linux-x86_64}, ... */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String o = os.contains("linux") ? "linux" : os.contains("mac") ? "macos" : os.contains("windows") ? "windows" : os.replace(' ', '_');
        String a = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64" : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64" : arch;
        return o + "-" + a;
    }

    private static String load() {
        String override = System.getProperty("polyflake.library");
        try {
            if (override != null && !override.isEmpty()) {
                System.load(Path.of(override).toAbsolutePath().toString());
                return null;
            }
            String file = System.mapLibraryName("polyflake_java");
            String resource = "/dev/polyflake/native/" + platform() + "/" + file;
            try (InputStream in = Native.class.getResourceAsStream(resource)) {
                if (in == null) {
                    return "polyflake: this jar has no native library for the platform " + platform()
                        + " (os.name=" + System.getProperty("os.name") + ", os.arch="
                        + System.getProperty("os.arch") + "; looked for " + resource + ")";
                }
                Path tmp = Files.createTempFile("polyflake-", "-" + file);
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                tmp.toFile().deleteOnExit();
                System.load(tmp.toString());
            }
            return null;
        } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
            return "polyflake: could not load the native library for " + platform() + ": " + e;
        }
    }

    /** Throw a clear error (naming the platform) if the library is not loaded. */
    static void ensureLoaded() {
        if (LOAD_ERROR != null) {
            throw new UnsatisfiedLinkError(LOAD_ERROR);
        }
    }

    /** The core's constants (version, defaults, presets, error kinds), read once. */
    static final class Constants {
        static final Map<String, Object> ALL;

        static {
            ensureLoaded();
            ALL = Fields.parse(constants());
        }

        private Constants() {}
    }

    // Test clocks.
    static native long manualClockNew(long startMs);

    static native long scriptedClockNew(long[] values);

    static native long manualClockOp(long handle, int op, long ms);

    static native void clockFree(long handle);

    // Snowflake generators.
    static native long snowflakeNew(String options, long clock);

    static native long snowflakeTryNext(long handle);

    static native long snowflakeNext(long handle, boolean interrupted);

    static native boolean snowflakeNextIds(long handle, long[] buf, boolean mayWait, boolean interrupted);

    static native int batchLen(long n);

    static native void decode(long handle, long id, long[] out);

    static native String snowflakeHealth(long handle);

    static native String snowflakeInfo(long handle);

    static native long snowflakeNodeId(long handle);

    static native boolean snowflakeReady(long handle, int how);

    static native void snowflakeClose(long handle);

    static native void snowflakeFree(long handle);

    static native void layout(String text, long[] out);

    static native String constants();

    // UUIDv7 and ULID generators: `format` is TimeIdGenerator.Format's ordinal (the core's order).
    static native long timeIdNew(int format, String options, long clock);

    static native boolean timeIdNext(long handle, long[] out, boolean mayWait, boolean interrupted);

    static native String timeIdHealth(long handle);

    static native double timeIdWaitBudgetMs(long handle);

    static native void timeIdClose(long handle);

    static native void timeIdFree(long handle);

    static native String timeIdFormat(int format, long high, long low);

    static native void timeIdParse(int format, String text, long[] out);

    static native long timeIdTimestampMs(int format, long high, long low);
}
