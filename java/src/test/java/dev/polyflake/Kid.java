package dev.polyflake;

import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Holder} in a JVM of its own (this JVM's java, the test and main classes), optionally
 * under {@code faketime -f OFFSET} with the wall clock only faked. Killed (SIGKILL) when closed,
 * so a failing test leaves no process behind holding a node id. Its stdout is read by a thread
 * of its own, so a holder that hangs fails the test at a deadline instead of hanging it.
 */
final class Kid implements AutoCloseable {
    private static final String EOF = "\u0000EOF";
    final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Writer stdin;
    private final Path stderr;

    Kid(Map<String, String> env, String faketime, Path stderr) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (faketime != null) {
            cmd.addAll(List.of("faketime", "-f", faketime));
        }
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        if (Runtime.version().feature() >= 22) {
            cmd.add("--enable-native-access=ALL-UNNAMED");
        }
        cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-cp", classPath(), Holder.class.getName()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(stderr.toFile());
        if (faketime != null) {
            // The wall clock only: elapsed time (every wait's deadline) stays true. Without
            // the monotonic clock faked, Debian's libfaketime needs no fix-up of timed waits
            // either; with it on, every LockSupport.parkNanos returns at once (a park loop
            // spins).
            pb.environment().put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
            pb.environment().put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
        }
        pb.environment().putAll(env);
        this.stderr = stderr;
        this.process = pb.start();
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the process is gone
            }
            lines.add(EOF);
        }, "kid-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /** The directories of the main and test classes (the holder needs nothing else). */
    static String classPath() {
        try {
            Path main = Paths.get(Snowflake.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path test = Paths.get(Holder.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return test + java.io.File.pathSeparator + main;
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    long pid() {
        return process.pid();
    }

    /** The next line starting with {@code prefix} (others are skipped), within 30 s. */
    String line(String prefix) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null || line.equals(EOF)) {
                throw new AssertionError("holder " + pid() + " " + (line == null ? "said nothing in 30 s" : "ended")
                    + " before saying " + prefix + "; its stderr:\n" + stderrText());
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    /** One line to its stdin. */
    void tell(String line) throws IOException {
        stdin.write(line + "\n");
        stdin.flush();
    }

    String stderrText() {
        try {
            String all = new String(Files.readAllBytes(stderr), StandardCharsets.UTF_8);
            return all.length() > 4000 ? all.substring(all.length() - 4000) : all;
        } catch (IOException e) {
            return "(" + e + ")";
        }
    }

    /** Wait for it to end (within 30 s); its exit status. */
    int waitFor() throws Exception {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("holder " + pid() + " did not end in 30 s; its stderr:\n" + stderrText());
        }
        return process.exitValue();
    }

    /** SIGKILL, and wait for it to be gone. */
    void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (java.lang.InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        kill();
    }

    /** A field {@code name=value} of a holder's line (the value up to the next space). */
    static String field(String line, String name) {
        int at = line.indexOf(" " + name + "=");
        if (at < 0) {
            throw new AssertionError("no " + name + " in: " + line);
        }
        int from = at + name.length() + 2;
        int end = line.indexOf(' ', from);
        return line.substring(from, end < 0 ? line.length() : end);
    }

    static long number(String line, String name) {
        return Long.parseLong(field(line, name));
    }

    /** The IDs a holder wrote (big-endian longs). */
    static long[] ids(Path file) throws IOException {
        if (!Files.exists(file)) {
            return new long[0];
        }
        long[] out = new long[(int) (Files.size(file) / 8)];
        try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            for (int k = 0; k < out.length; k++) {
                out[k] = in.readLong();
            }
        } catch (EOFException e) {
            throw new AssertionError("a short ID file " + file, e);
        }
        return out;
    }
}
