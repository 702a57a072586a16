# The Java binding (java/): a JNI library (java/src/*.rs, crate polyflake-java, jni 0.22) and the
# dev.polyflake API over it (java/src/main/java), built by Maven for Java 11 bytecode
# (--release 11, -Xlint:all -Werror) and tested with JUnit 5 through Surefire on two JDKs.
#
#   make build-java   the JNI library (release), staged as target/java-native/linux-x86_64/
#                     libpolyflake_java.so, which the jar carries as a resource
#   make test-java    JUnit 5 on OpenJDK 17 and again on Temurin 25 (one Maven build dir each),
#                     beside a real ZooKeeper (tests/stores/with_zookeeper.sh); the etcd tests
#                     start their own etcd. The scenario files on both clock sources (record:
#                     scenario-coverage/java.txt), the layout and format vectors, bad input,
#                     file/etcd/ZooKeeper leases, the Cleaner, and 10,000 virtual threads on 2
#                     carriers (JDK 21+: run on Temurin 25, skipped on 17); a fixed node id
#                     handed between JVMs (close, System.exit, SIGKILL; the clock 3 s behind
#                     under faketime), two class loaders in one JVM, the kernel's clock word
#                     under a preloaded stand-in for adjtimex (cc builds it)
#   make build-polyglot-java   the uniqueness run's Java participant (tests/polyglot/
#                     Participant.java, compiled against the jar)
#   make bench-java   the JMH benchmark (java/bench/, not part of test; also in `make bench`):
#                     nextId strict and monotonic (precise and coarse clock), nextIds(4096),
#                     uuid7(), ulid() and 8 threads on one generator, beside
#                     System.currentTimeMillis(), Hutool's Snowflake and uuid-creator in the same
#                     run; java/bench/report.py prints the ratios, the targets met or missed and
#                     BENCHMARKS.md's rows from JMH's JSON
#   make bench-check-java   the same cases, short, in interleaved rounds: the benchmark gate's
#                     JSON rows (make bench-check), each a ratio to System.currentTimeMillis()
#   make bench-java-ceiling   CPU-seconds per wall-second of a strict nextId() loop at the
#                     layout's ceiling (4,096,000 IDs/s on 41/10/12), beside Hutool's Snowflake
# `make dist` builds polyflake-0.1.0.jar with its sources and javadoc jars (mk/dist.mk's hook:
# dist-java); tests/dist/java_guide.sh (make test-dist) installs it from a file-based Maven
# repository into a fresh project with no Rust on PATH.

# Maven, and the JDK both Maven and the tests run on first (Temurin 25 is installed beside it on
# this machine kind, outside apt).
APT_PACKAGES += maven openjdk-17-jdk-headless
DEPS_TARGETS += deps-java
BUILD_TARGETS += build-java build-polyglot-java
TEST_TARGETS += test-java

.PHONY: deps-java build-java test-java build-polyglot-java dist-java bench-java

JAVA17_HOME ?= /usr/lib/jvm/java-17-openjdk-amd64
JAVA25_HOME ?= /usr/lib/jvm/temurin-25-jdk-amd64
JAVA_DIR := $(ROOT)/java
JAVA_PLATFORM := linux-x86_64
JAVA_NATIVE := $(CARGO_TARGET_DIR)/java-native
JAVA_LIB := $(JAVA_NATIVE)/$(JAVA_PLATFORM)/libpolyflake_java.so
# -q: Maven's own chatter off (Surefire's summary and every failure still print).
JAVA_MVN = mvn -B -q -Dstyle.color=never -f $(JAVA_DIR)/pom.xml -Dpolyflake.native.root=$(JAVA_NATIVE) -Dpolyflake.root=$(ROOT)

deps-java:
	$(call say,Java: OpenJDK 17 ($(JAVA17_HOME)) and Temurin 25 ($(JAVA25_HOME)) and Maven)
	@for h in $(JAVA17_HOME) $(JAVA25_HOME); do [ -x $$h/bin/javac ] || { echo "no JDK at $$h"; exit 1; }; \
	  echo "$$h: $$($$h/bin/java -version 2>&1 | head -n 1)"; done
	@command -v mvn >/dev/null || { echo "mvn not found: 'make deps-apt' installs maven"; exit 1; }
	@JAVA_HOME=$(JAVA17_HOME) mvn -v | sed -n 1p

build-java: deps-java
	$(call say,Java: the JNI library (cargo build --release -p polyflake-java) staged for the jar as $(JAVA_LIB))
	$(CARGO) build --release -p polyflake-java --features workspace-hack
	@mkdir -p $(dir $(JAVA_LIB))
	cp $(POLYFLAKE_RELEASE_DIR)/libpolyflake_java.so $(JAVA_LIB)

# with_zookeeper.sh appends the ensemble as the last argument (and sets POLYFLAKE_TEST_ZOOKEEPER).
test-java: build-java
	$(call say,Java: JUnit 5 on OpenJDK 17 then Temurin 25 beside a real ZooKeeper (scenarios on both clocks; vectors; bad input; leases on files and etcd and ZooKeeper; Cleaner; virtual threads on 25; restart guard across JVMs, faketime, class loaders; clock sync))
	POLYFLAKE_REQUIRE_STORES=true $(ROOT)/tests/stores/with_zookeeper.sh sh -c '\
	  echo "--- OpenJDK 17" && JAVA_HOME=$(JAVA17_HOME) $(JAVA_MVN) -Dpolyflake.build.dir=$(CARGO_TARGET_DIR)/java-17 -Dmaven.javadoc.skip=true -Dmaven.source.skip=true verify && \
	  echo "--- Temurin 25" && MAVEN_OPTS=--sun-misc-unsafe-memory-access=allow JAVA_HOME=$(JAVA25_HOME) $(JAVA_MVN) -Dpolyflake.build.dir=$(CARGO_TARGET_DIR)/java-25 -Dmaven.javadoc.skip=true -Dmaven.source.skip=true -Dpolyflake.require.virtual.threads=true verify' java-tests
	@for d in java-17 java-25; do python3 -c 'import sys,glob,xml.etree.ElementTree as E; t=[E.parse(f).getroot() for f in glob.glob(sys.argv[1]+"/surefire-reports/TEST-*.xml")]; print(sys.argv[2]+": %d tests, %d skipped, %d failed" % (sum(int(x.get("tests")) for x in t), sum(int(x.get("skipped")) for x in t), sum(int(x.get("failures"))+int(x.get("errors")) for x in t)))' $(CARGO_TARGET_DIR)/$$d $$d; done

# The jar users install: built from the tested release library, stripped, for linux-x86_64 (the
# release workflow adds the other platforms' libraries under dev/polyflake/native/<platform>/).
# Hooked into `make dist` and `make test-dist` (mk/dist.mk's targets) from here.
dist: dist-java
test-dist: test-dist-java
.PHONY: test-dist-java
JAVA_DIST_NATIVE := $(CARGO_TARGET_DIR)/dist-stage/java-native

dist-java: build-java
	$(call say,Java: dist/polyflake-$(DIST_VERSION).jar with its -sources and -javadoc jars and POM (libpolyflake_java.so for $(JAVA_PLATFORM) inside; stripped))
	rm -rf $(JAVA_DIST_NATIVE) && mkdir -p $(JAVA_DIST_NATIVE)/$(JAVA_PLATFORM) $(DIST)
	strip --strip-all -o $(JAVA_DIST_NATIVE)/$(JAVA_PLATFORM)/libpolyflake_java.so $(JAVA_LIB)
	JAVA_HOME=$(JAVA17_HOME) mvn -B -q -f $(JAVA_DIR)/pom.xml -Dpolyflake.native.root=$(JAVA_DIST_NATIVE) \
	  -Dpolyflake.build.dir=$(CARGO_TARGET_DIR)/java-dist -DskipTests package
	rm -f $(DIST)/polyflake-*.jar
	cp $(CARGO_TARGET_DIR)/java-dist/polyflake-$(DIST_VERSION).jar $(CARGO_TARGET_DIR)/java-dist/polyflake-$(DIST_VERSION)-sources.jar \
	  $(CARGO_TARGET_DIR)/java-dist/polyflake-$(DIST_VERSION)-javadoc.jar $(DIST)/
	cp $(JAVA_DIR)/pom.xml $(DIST)/polyflake-$(DIST_VERSION).pom
	unzip -l $(DIST)/polyflake-$(DIST_VERSION).jar | grep -E 'native/|polyflake/Snowflake.class'
	@ls -l $(DIST)/polyflake-$(DIST_VERSION)*.jar $(DIST)/polyflake-$(DIST_VERSION).pom

# Also run by tests/dist/test_dist.sh (make test-dist) with the rest of the installs.
test-dist-java: dist-java
	$(call say,Java: the jar from a file-based Maven repository into a fresh Maven project with no Rust on PATH)
	JAVA_HOME=$(JAVA17_HOME) bash tests/dist/java_guide.sh $(ROOT) $(DIST) $(DIST_VERSION)

# The polyglot participant, compiled against the jar the tests built (java-17's).
JAVA_POLYGLOT := $(CARGO_TARGET_DIR)/polyglot/java
build-polyglot-java: build-java
	$(call say,Java participant of the uniqueness run: tests/polyglot/Participant.java against the jar)
	JAVA_HOME=$(JAVA17_HOME) $(JAVA_MVN) -Dpolyflake.build.dir=$(CARGO_TARGET_DIR)/java-17 -DskipTests \
	  -Dmaven.javadoc.skip=true -Dmaven.source.skip=true package
	@mkdir -p $(JAVA_POLYGLOT)
	$(JAVA17_HOME)/bin/javac --release 11 -Xlint:all -Werror -d $(JAVA_POLYGLOT) \
	  -cp $(CARGO_TARGET_DIR)/java-17/polyflake-$(DIST_VERSION).jar $(ROOT)/tests/polyglot/Participant.java
	cp $(CARGO_TARGET_DIR)/java-17/polyflake-$(DIST_VERSION).jar $(JAVA_POLYGLOT)/polyflake.jar

# The JMH benchmark (java/bench/pom.xml: JMH, Hutool 5.8 and uuid-creator from Maven Central) on
# the jar build-polyglot-java packages, run on JAVA_BENCH_HOME with JMH_ARGS (about 2 minutes:
# 15 cases, each 1 fork of 3 x 1 s warm-up and 5 x 1 s measurement). Static node ids with the
# restart guard off (no mark left in the lease directory) in a host scope of their own, so a test
# suite running beside it keeps its own. Override for an idle re-run,
# e.g. make bench-java JMH_ARGS="-f 2 -wi 5 -i 10", add a profiler (JMH_ARGS="... -prof gc"), or
# run some cases only (JMH_CASES='IdBench.polyflakeNextIds'; report.py then notes the others).
bench: bench-java
.PHONY: bench-check-java bench-java-ceiling java-bench-classes
JAVA_BENCH_HOME ?= $(JAVA25_HOME)
JMH_ARGS ?= -f 1 -wi 3 -w 1s -i 5 -r 1s
JMH_CASES ?= dev.polyflake.bench.IdBench
JAVA_BENCH_DIR := $(CARGO_TARGET_DIR)/java-bench
JAVA_BENCH_JAR := $(CARGO_TARGET_DIR)/java-17/polyflake-$(DIST_VERSION).jar
# The JVM and classpath both runs use (JMH forks inherit the JVM's flags).
JAVA_BENCH_JVM = java=$(JAVA_BENCH_HOME)/bin/java; \
	access=$$($$java --enable-native-access=ALL-UNNAMED -version >/dev/null 2>&1 && echo --enable-native-access=ALL-UNNAMED); \
	cp=$(JAVA_BENCH_DIR)/classes:$(JAVA_BENCH_JAR):$$(cat $(JAVA_BENCH_DIR)/classpath.txt)

# java/bench/ compiled against the jar, and its Maven classpath in classpath.txt.
java-bench-classes: build-polyglot-java
	JAVA_HOME=$(JAVA_BENCH_HOME) mvn -B -q -Dstyle.color=never -f $(JAVA_DIR)/bench/pom.xml -Dpolyflake.jar=$(JAVA_BENCH_JAR) \
	  -Dpolyflake.build.dir=$(JAVA_BENCH_DIR) compile dependency:build-classpath -Dmdep.outputFile=$(JAVA_BENCH_DIR)/classpath.txt

bench-java: java-bench-classes
	$(call say,Java benchmark (JMH, $(JAVA_BENCH_HOME)): $(JMH_ARGS); JSON in $(JAVA_BENCH_DIR)/jmh.json)
	@load=$$(cut -d' ' -f1-3 /proc/loadavg); $(JAVA_BENCH_JVM); \
	POLYFLAKE_HOST_SCOPE=bench-java $$java $$access -cp $$cp \
	  org.openjdk.jmh.Main $(JMH_ARGS) -rf json -rff $(JAVA_BENCH_DIR)/jmh.json '$(JMH_CASES)' && \
	python3 $(JAVA_DIR)/bench/report.py $(JAVA_BENCH_DIR)/jmh.json "$$load"

# The benchmark gate's Java rows (mk/bench-check.mk; 75 s warm at load 3 on 2 cores, JVM starts
# included):
# java/bench/src/main/java/dev/polyflake/bench/Check.java runs JMH_CHECK_ROUNDS rounds, each
# case and its references once per round in a fresh JVM (one JMH fork, JMH_CHECK_ARGS), and
# prints one JSON row per line on stdout, everything else on stderr (the build's output too).
# The forks load the staged library (-Dpolyflake.library: the file the jar carries, without
# inflating 55 MB from the jar at each of the 55 JVM starts, 0.6 s each) and run on a fixed
# 256 MB heap (a growing heap's fresh pages made the allocating case, nextIds(4096), vary 20x
# from fork to fork under load). The command, from the repository's root:
#   POLYFLAKE_HOST_SCOPE=bench-check-java-$$ /usr/lib/jvm/temurin-25-jdk-amd64/bin/java \
#     --enable-native-access=ALL-UNNAMED -Dpolyflake.library=target/java-native/linux-x86_64/libpolyflake_java.so \
#     -cp target/java-bench/classes:target/java-17/polyflake-0.1.0.jar:$(cat target/java-bench/classpath.txt) \
#     dev.polyflake.bench.Check 5 -wi 2 -w 150ms -i 3 -r 150ms -jvmArgsAppend '-Xms256m -Xmx256m'
JMH_CHECK_ROUNDS ?= 5
JMH_CHECK_ARGS ?= -wi 2 -w 150ms -i 3 -r 150ms -jvmArgsAppend '-Xms256m -Xmx256m'
bench-check-java:
	@$(MAKE) -s --no-print-directory java-bench-classes >&2
	@$(JAVA_BENCH_JVM); \
	POLYFLAKE_HOST_SCOPE=bench-check-java-$$$$ $$java $$access -Dpolyflake.library=$(JAVA_LIB) -cp $$cp \
	  dev.polyflake.bench.Check $(JMH_CHECK_ROUNDS) $(JMH_CHECK_ARGS)

# CPU time per wall-clock second of a strict nextId() loop at the layout's ceiling (one generator
# on 41/10/12: 4,096,000 IDs per second), beside Hutool's Snowflake in the same loop
# (java/bench/src/main/java/dev/polyflake/bench/CeilingCpu.java; not JMH). CEILING_ARGS: seconds
# per timed span and rounds (about 25 s by default).
CEILING_ARGS ?= 3 3
bench-java-ceiling: java-bench-classes
	$(call say,Java: CPU-seconds per wall-second of a strict nextId() loop at 41/10/12's ceiling, beside Hutool's Snowflake ($(JAVA_BENCH_HOME)))
	@$(JAVA_BENCH_JVM); \
	POLYFLAKE_HOST_SCOPE=bench-java-ceiling-$$$$ $$java $$access -cp $$cp dev.polyflake.bench.CeilingCpu $(CEILING_ARGS)
