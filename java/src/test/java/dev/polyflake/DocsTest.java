package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * Every Java snippet of docs/java.md and README.md compiles against this API (each wrapped in a
 * method of its own, with a {@code Snowflake g} and a logger where it uses them but does not
 * declare them). The Spring bean example needs Spring and is checked for its polyflake calls only
 * by name. The README's quickstart also runs.
 */
class DocsTest {
    static final Pattern JAVA = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);

    static List<String> snippets(Path md) throws IOException {
        List<String> out = new ArrayList<>();
        Matcher m = JAVA.matcher(new String(Files.readAllBytes(md), StandardCharsets.UTF_8));
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    static String wrap(int n, String snippet) {
        StringBuilder imports = new StringBuilder();
        StringBuilder body = new StringBuilder();
        for (String line : snippet.split("\n")) {
            (line.startsWith("import ") ? imports : body).append(line).append('\n');
        }
        return wrap(n, imports.toString(), body.toString());
    }

    static String wrap(int n, String imports, String body) {
        boolean declaresG = Pattern.compile("[A-Za-z0-9]+ g =").matcher(body).find();
        String params = declaresG ? "" : "Snowflake g";
        return "import dev.polyflake.*;\nimport java.nio.file.*;\nimport java.time.*;\nimport java.util.*;\n" + imports
            + "public class Snippet" + n + " {\n"
            + "  static final class Log { void warn(String f, Object... a) {} void error(String f, Object... a) {} }\n"
            + "  static final Log log = new Log();\n"
            + "  public static void run(" + params + ") throws Exception {\n" + body + "\n  }\n}\n";
    }

    static final class Source extends SimpleJavaFileObject {
        final String code;

        Source(String name, String code) {
            super(URI.create("string:///" + name + ".java"), Kind.SOURCE);
            this.code = code;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return code;
        }
    }

    @Test
    void everyJavaSnippetCompiles() throws Exception {
        List<String> all = new ArrayList<>();
        all.addAll(snippets(Support.root().resolve("docs/java.md")));
        all.addAll(snippets(Support.root().resolve("README.md")));
        assertTrue(all.size() >= 8, "java snippets: " + all.size());
        List<JavaFileObject> sources = new ArrayList<>();
        int n = 0;
        for (String s : all) {
            if (s.contains("@Configuration")) {
                for (String call : new String[] {"Snowflake.builder()", ".fileLease(", ".waitReady(", ".health()", "destroyMethod = \"close\""}) {
                    assertTrue(s.contains(call), "the Spring example lost " + call);
                }
                continue;
            }
            sources.add(new Source("Snippet" + n, wrap(n, s)));
            n++;
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
        Path out = Files.createTempDirectory("polyflake-snippets");
        try {
            List<String> options = List.of("-d", out.toString(), "-cp", System.getProperty("java.class.path"), "-proc:none");
            boolean ok = javac.getTask(null, null, diags, options, null, sources).call();
            StringBuilder errors = new StringBuilder();
            for (Diagnostic<? extends JavaFileObject> d : diags.getDiagnostics()) {
                if (d.getKind() == Diagnostic.Kind.ERROR) {
                    errors.append(d.getSource().getName()).append(':').append(d.getLineNumber()).append(' ')
                        .append(d.getMessage(null)).append('\n')
                        .append(((Source) d.getSource()).code.split("\n")[(int) d.getLineNumber() - 1]).append('\n');
                }
            }
            assertTrue(ok, errors.toString());
            // The README's quickstart (the last snippet) runs, with assertions on.
            try (java.net.URLClassLoader loader = new java.net.URLClassLoader(new java.net.URL[] {out.toUri().toURL()},
                DocsTest.class.getClassLoader())) {
                Class<?> readme = loader.loadClass("Snippet" + (n - 1));
                readme.getDeclaredMethod("run").invoke(null);
            }
        } finally {
            Support.deleteTree(out);
        }
        assertEquals(all.size() - 1, n);
    }
}
